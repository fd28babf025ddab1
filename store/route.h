/* route.h: the data plane's one lookup, sandbox id -> where its envd and ports
 * are reached (corral-api's /v1/internal/route, the nginx module's subrequest). */
#ifndef CORRAL_ROUTE_H
#define CORRAL_ROUTE_H

#include "rconn.h"
#include "worker_store.h"

struct route {
    struct worker_route worker; /* its worker's data port and key */
    int secure;                 /* envd needs an access token */
    int public;                 /* other ports need no traffic token */
    char mask_host[201];        /* its maskRequestHost, "" none */
    char ws[33];                /* whose it is */
};

/* 1 found (a running sandbox on an alive worker), 2 paused and created to
 * resume on traffic (out->ws set: the caller resumes it and looks again), 3
 * paused (or pausing, resuming) otherwise: there, but not now, 0 not
 * (unknown, ended, its worker gone), -1 Redis failed. sbid must be a valid
 * id. */
#define ROUTE_PAUSED 3

int route_lookup(struct rconn *rc, const char *sbid, struct route *out);

#endif
