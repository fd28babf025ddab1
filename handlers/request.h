/* request.h: one FastCGI request as the handlers see it. */
#ifndef CORRAL_REQUEST_H
#define CORRAL_REQUEST_H

#include "accounts.h"
#include "server.h"
#include "token.h"
#include "url_decode.h" /* handlers decode query pairs with it */

#include <fcgiapp.h>
#include <jansson.h>

#define REQUEST_MAX_PARAMS 2

struct request {
    FCGX_Request *fcgi;
    struct worker_thread *thread;
    struct rconn *rc;
    const struct corral_conf *conf;
    const char *method;
    char path[512];
    const char *query;
    const char *request_id;
    char params[REQUEST_MAX_PARAMS][64]; /* {id} segments of the matched route */
    struct token cred;                   /* the caller's credential, once checked */
    enum role role;
    int responded;
};

/* Reads FastCGI params into req. */
void request_init(struct request *req, FCGX_Request *fcgi, struct worker_thread *t);
const char *request_header(struct request *req, const char *cgi_name);

/* Reads and parses a JSON object body. Returns it, or NULL after answering
 * 413 (too large) or 400 (malformed, not an object). */
json_t *request_json_body(struct request *req);

/* Copies the URL-decoded value of a query parameter; 1 found, 0 absent. */
int request_query(const struct request *req, const char *name, char *out, size_t outlen);
/* The same, telling absent (0) from present but badly encoded or longer than
 * outlen (-1): a parameter too long for its buffer is refused, not ignored. */
int request_query_given(const struct request *req, const char *name, char *out, size_t outlen);

#endif
