/* POST /v1/worker/audit: an agent-mode worker's permission-gate decisions,
 * appended to its workspace's audit stream (decision 0054).
 *
 *   {"lines": ["<one line of the gate's audit.jsonl>", ...]}   (at most 200)
 *
 * Authenticated as the heartbeat is. Only a workspace-scoped worker may
 * write (the unscoped fleet has no agents: 403), only into its own
 * workspace's stream, and only about sandboxes of that workspace placed on
 * it: a line naming any other sandbox is refused by its index, nothing of it
 * written. Every line is checked before any is written (a malformed one: 400,
 * nothing written). Each becomes one event, gate_allowed or gate_denied, by
 * worker:<id>, its reason the decision rebuilt from the checked fields only. */
#include "audit.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_store.h"
#include "worker_audit_parse.h"
#include "worker_batch.h"
#include "worker_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 written, 0 refused (not a sandbox of this workspace placed on wid), -1 Redis. */
static int write_one(struct request *req, const char *wid, const void *elem)
{
    const struct gate_decision *d = elem;
    struct sandbox_record rec;
    char actor[AUDIT_ACTOR_MAX], *reason;
    int found = sandbox_read(req->rc, req->cred.ws, d->sbid, &rec), rc;

    if (found != 1)
        return found;
    if (strcmp(rec.worker, wid) != 0) {
        sandbox_record_free(&rec);
        return 0;
    }
    audit_actor_worker(actor, wid);
    reason = json_dumps(d->fields, JSON_COMPACT | JSON_SORT_KEYS);
    struct audit_event e = {.event = d->allowed ? AUDIT_GATE_ALLOWED : AUDIT_GATE_DENIED,
                            .actor = actor,
                            .sandbox = d->sbid,
                            .worker = wid,
                            .tier = rec.tier,
                            .reason = reason};
    rc = reason && audit_append(req->rc, req->cred.ws, &e) == 0 ? 1 : -1;
    free(reason);
    sandbox_record_free(&rec);
    return rc;
}

static json_t *line_index(const void *elem, size_t i)
{
    (void)elem;
    return json_integer((json_int_t)i);
}

void h_worker_audit(struct request *req)
{
    char wid[33], err[256];
    json_t *body = request_json_body(req);
    struct worker_audit_body b;
    int st;

    if (!body)
        return;
    st = worker_audit_body_parse(body, &b, err, sizeof(err));
    json_decref(body);
    if (st != 0) {
        respond_error(req, st, "%s", err);
    } else if (worker_authenticate(req, wid) == 1) {
        if (!req->cred.ws[0])
            respond_error(req, 403, "only a workspace-scoped worker reports gate decisions");
        else
            worker_batch_write(req, wid,
                               &(struct worker_batch){.v = b.v,
                                                      .n = b.n,
                                                      .size = sizeof(*b.v),
                                                      .write = write_one,
                                                      .refused_id = line_index});
    }
    worker_audit_body_free(&b);
}
