/* handshake_parse.h: the body of POST /v1/worker/handshake checked (pure: no
 * Redis, no FastCGI), the worker's capabilities in the shapes the placement
 * script and the worker record take. */
#ifndef CORRAL_HANDSHAKE_PARSE_H
#define CORRAL_HANDSHAKE_PARSE_H

#include "data_addr.h"
#include "tunnel_store.h" /* TUNNEL_DATA_ADDR only */

#include <jansson.h>
#include <stddef.h>

struct handshake_body {
    char runtimes[512];   /* "runc:1,runsc:2," for the placement script */
    char templates[1100]; /* ",base,other," */
    const json_t *runtimes_json, *templates_json;
    int agent; /* mode "agent": a person's own machine (decision 0054) */
    int egress, public_ok;
    double cpu;
    long mem, slots;
    /* canonical, one the operator listed; TUNNEL_DATA_ADDR when tunnel */
    char data_addr[DATA_ADDR_CANON];
    int tunnel;           /* reached through its tunnel, not at a data_addr (decision 0087) */
    const char *hostname; /* "" when absent or too long */
    /* A returning worker's id and secret (both checked later against the
     * store); worker_id NULL for a new worker. */
    const char *worker_id, *worker_secret;
};

/* body into hb, data_addr checked against allow; scoped: the join token
 * names a workspace (an agent needs one). Pointers borrow from body. 0, or
 * the status to answer (400, 403) with err. */
int handshake_parse(const json_t *body, const struct data_addr_allow *allow, int scoped,
                    struct handshake_body *hb, char *err, size_t errlen);

#endif
