/* handlers.h: one function per route; router.c's table says who may call which. */
#ifndef CORRAL_HANDLERS_H
#define CORRAL_HANDLERS_H

#include "request.h"

typedef void (*handler_fn)(struct request *req);

void h_health(struct request *req);
void h_not_implemented(struct request *req);

void h_sandbox_create(struct request *req);
void h_sandbox_list(struct request *req);
void h_sandbox_get(struct request *req);
void h_sandbox_delete(struct request *req);

void h_workspace_get(struct request *req);
void h_workspace_patch(struct request *req);

void h_key_create(struct request *req);
void h_key_delete(struct request *req);
void h_jointoken_create(struct request *req);
void h_jointoken_delete(struct request *req);

void h_workers_list(struct request *req);
void h_worker_delete(struct request *req);

void h_worker_handshake(struct request *req);
void h_worker_heartbeat(struct request *req);

/* The route dispatcher: match, authenticate, authorize, call. */
void router_dispatch(struct request *req);

#endif
