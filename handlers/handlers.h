/* handlers.h: one function per route; router.c's table says who may call which. */
#ifndef CORRAL_HANDLERS_H
#define CORRAL_HANDLERS_H

#include "request.h"

typedef void (*handler_fn)(struct request *req);

void h_health(struct request *req);

void h_sandbox_create(struct request *req);
void h_sandbox_list(struct request *req);
void h_sandbox_get(struct request *req);
void h_sandbox_delete(struct request *req);
void h_sandbox_network(struct request *req);

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
void h_worker_telemetry(struct request *req);

/* A sandbox's metrics and logs (h_metrics.c, h_logs.c). */
void h_sandbox_metrics(struct request *req);
void h_e2b_sandbox_metrics(struct request *req);
void h_e2b_sandboxes_metrics(struct request *req);
void h_e2b_logs(struct request *req);
void h_e2b_logs_v2(struct request *req);

/* The create flow both APIs share (create_wait.c): budget, Idempotency-Key,
 * scheduler_create, wait for "running" under a lease, clean up on failure.
 * 0 when running (not yet answered), -1 when the error was answered. body is
 * the request's JSON (its fingerprint). Frees spec. */
int sandbox_create_and_wait(struct request *req, struct sandbox_spec *spec, const json_t *body,
                            char sbid[SANDBOX_ID_MAX]);
int internal_caller(struct request *req);

/* The metadata filter of both lists: "k=v&k2=v2" (URL-encoded as one query
 * value, as E2B sends it); 1 when meta has every pair. h_sandboxes.c. */
int metadata_matches(const json_t *meta, const char *filter);

void h_internal_route(struct request *req);
void h_e2b_create(struct request *req);
void h_e2b_list(struct request *req);
void h_e2b_list_v2(struct request *req);
void h_e2b_get(struct request *req);
void h_e2b_timeout(struct request *req);
void h_e2b_connect(struct request *req);
void h_e2b_network(struct request *req);
void h_e2b_templates(struct request *req);
void h_e2b_template_alias(struct request *req);

/* The route dispatcher: match, authenticate, authorize, call. */
void router_dispatch(struct request *req);

#endif
