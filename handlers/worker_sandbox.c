/* worker_sandbox.c: a worker's own running sandbox (worker_sandbox.h). */
#include "worker_sandbox.h"

#include "audit.h"
#include "respond.h"

#include <string.h>

/* The sandbox when it runs on wid of the caller's pool: 1, 0 answered 404,
 * -1 answered 503. Free rec when 1. */
int worker_running_sandbox(struct request *req, const char *wid, const char *sbid, char ws[33],
                           struct sandbox_record *rec)
{
    int found = sandbox_workspace_of(req->rc, sbid, ws);

    if (found == 1)
        found = sandbox_read(req->rc, ws, sbid, rec);
    if (found == 1 && (strcmp(rec->pool, req->cred.ws) != 0 || strcmp(rec->worker, wid) != 0 ||
                       !sandbox_is_running(rec))) {
        sandbox_record_free(rec);
        found = 0;
    }
    if (found < 0)
        respond_store_down(req);
    else if (found == 0)
        NOT_FOUND_SANDBOX(req);
    return found;
}

void worker_sandbox_audit(struct request *req, const char *wid, const char *ws,
                          const struct sandbox_record *rec, const char *event, const char *reason)
{
    char actor[AUDIT_ACTOR_MAX];

    audit_actor_worker(actor, wid);
    struct audit_event e = {.event = event,
                            .actor = actor,
                            .sandbox = rec->id,
                            .worker = wid,
                            .tier = rec->tier,
                            .reason = reason};
    audit_append(req->rc, ws, &e);
}
