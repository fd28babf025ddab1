/* router.h: the route table's lookup as a pure function, so which route a
 * method and path reach (and 404/405/501 when none) is testable without
 * FastCGI or Redis (tests/unit/unit_router.c). router_dispatch (handlers.h)
 * adds the credential checks and calls the handler. */
#ifndef CORRAL_ROUTER_H
#define CORRAL_ROUTER_H

#include "handlers.h"

/* Who may call a route. ACCESS_INTERNAL routes check the gateway key
 * themselves (h_internal.c); ACCESS_VOLUME takes a volume's own token
 * (volume_token.h), never an API key. */
enum access {
    ACCESS_PUBLIC,
    ACCESS_MEMBER,
    ACCESS_OWNER,
    ACCESS_WORKER,
    ACCESS_INTERNAL,
    ACCESS_VOLUME
};

enum route_outcome {
    ROUTE_SERVED,             /* fn and access are set */
    ROUTE_UNSERVED,           /* in E2B's spec, not served: 501 naming spec_route */
    ROUTE_METHOD_NOT_ALLOWED, /* the path is known, not with this method: 405 */
    ROUTE_NOT_FOUND,          /* 404 */
};

struct route_match {
    enum route_outcome outcome;
    handler_fn fn;
    enum access access;
    const char *spec_route; /* ROUTE_UNSERVED: the spec's path template */
    int param_field;        /* LOG_SANDBOX or LOG_WORKER: what params[0] names; -1 neither */
};

/* Looks req->method and req->path up; a served route's "{}" segments go to
 * req->params. Reads and writes nothing else of req. */
void router_match(struct request *req, struct route_match *m);

#endif
