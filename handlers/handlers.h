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
void h_audit(struct request *req);

void h_worker_handshake(struct request *req);
void h_worker_heartbeat(struct request *req);
void h_worker_telemetry(struct request *req);
void h_worker_audit(struct request *req);
void h_worker_registry_token(struct request *req);
void h_worker_tunnel(struct request *req);

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
/* The same create, answering nothing: 0 it runs, else the status its answer
 * would have (msg says why). For a call that makes several (fork). */
int sandbox_create_quiet(struct request *req, struct sandbox_spec *spec, char sbid[SANDBOX_ID_MAX],
                         char *msg, size_t msglen);
int sandbox_create_and_wait(struct request *req, struct sandbox_spec *spec, const json_t *body,
                            char sbid[SANDBOX_ID_MAX]);
int internal_caller(struct request *req);

void h_internal_route(struct request *req);
void h_e2b_create(struct request *req);
void h_e2b_list(struct request *req);
void h_e2b_list_v2(struct request *req);
void h_e2b_get(struct request *req);
void h_e2b_timeout(struct request *req);
void h_e2b_connect(struct request *req);
void h_e2b_network(struct request *req);
/* timeout in seconds from an E2B body (-2: absent and not required), or -1
 * after answering 400. With keep_memory, its "memory" too (resume and connect:
 * false asks for a fresh start, decision 0074; absent: 1). h_e2b.c. */
long e2b_body_timeout(struct request *req, int required, int *keep_memory);
/* A body's boolean field (absent or null: 1), or -1 after answering 400. */
int body_flag(struct request *req, const json_t *body, const char *field);
/* Pause and resume (h_pause.c, decision 0044). */
void h_e2b_pause(struct request *req);
void h_e2b_resume(struct request *req);
void h_e2b_refreshes(struct request *req);
void e2b_connect_paused(struct request *req, long timeout_s, int keep_memory);
void h_sandbox_pause(struct request *req);
void h_sandbox_resume(struct request *req);
/* Snapshots and forks (h_snapshots.c, decision 0048). */
void h_e2b_snapshot_create(struct request *req);
void h_e2b_snapshots(struct request *req);
void h_e2b_template_delete(struct request *req);
void h_e2b_fork(struct request *req);
void h_sandbox_snapshot_create(struct request *req);
void h_snapshots(struct request *req);
void h_snapshot_delete(struct request *req);
/* Volumes (h_volumes.c, decision 0049); DELETE is the same on both surfaces. */
void h_e2b_volume_create(struct request *req);
void h_e2b_volumes(struct request *req);
void h_e2b_volume_get(struct request *req);
void h_volume_create(struct request *req);
void h_volumes(struct request *req);
void h_volume_get(struct request *req);
void h_volume_delete(struct request *req);
/* The volume file API (h_volume_content.c, decision 0071). */
void h_volume_content(struct request *req);
/* Resumes ws's paused sbid for gateway traffic: 1 it runs, 0 not. */
int resume_for_traffic(struct request *req, const char *ws, const char *sbid);
void h_e2b_templates(struct request *req);
void h_e2b_template_alias(struct request *req);
void h_e2b_template_get(struct request *req);
void h_e2b_template_patch(struct request *req);
void h_e2b_template_request(struct request *req);
void h_e2b_template_files(struct request *req);
void h_e2b_template_build(struct request *req);
void h_e2b_build_status(struct request *req);
void h_template_upload(struct request *req);
void h_template_tags_assign(struct request *req);
void h_template_tags_delete(struct request *req);
void h_template_tags_list(struct request *req);
void h_worker_build_report(struct request *req);
void h_worker_build_files(struct request *req);

/* The route dispatcher: match, authenticate, authorize, call. */
void router_dispatch(struct request *req);

#endif
