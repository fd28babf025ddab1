/* worker_sandbox.h: what a worker may ask about one sandbox (the proxy's
 * placeholders, its transform counts: decisions 0090, 0091) only for one
 * placed on it, of the caller's pool, and running; any other answers the same
 * 404, so a worker learns nothing of sandboxes not its own. */
#ifndef CORRAL_WORKER_SANDBOX_H
#define CORRAL_WORKER_SANDBOX_H

#include "request.h"
#include "sandbox_store.h"

/* 1 with ws and rec (free it), 0 answered 404, -1 answered 503. */
int worker_running_sandbox(struct request *req, const char *wid, const char *sbid, char ws[33],
                           struct sandbox_record *rec);

/* event about rec (in workspace ws), by worker:<wid>, with reason. */
void worker_sandbox_audit(struct request *req, const char *wid, const char *ws,
                          const struct sandbox_record *rec, const char *event, const char *reason);

#endif
