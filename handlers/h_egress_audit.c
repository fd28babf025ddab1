/* POST /v1/worker/egress-audit (decision 0091): a proxy's counts of the
 * requests its rules changed, forwarded by its worker each second, recorded
 * in the sandbox's workspace audit as egress_transform events (host, header
 * names, count; never a value: none travels). Only for a sandbox running on
 * the calling worker (worker_sandbox.h); the same 404 for any other. */
#include "audit.h"
#include "egress_audit_parse.h"
#include "respond.h"
#include "secret_store.h"
#include "secrets_routes.h"
#include "worker_registry.h"
#include "worker_sandbox.h"

#include <stdio.h>
#include <stdlib.h>

static void record_all(struct request *req, const char *wid, const struct egress_audit_body *b)
{
    struct sandbox_record rec;
    char ws[33], reason[sizeof(b->e[0].headers) + 320];

    if (worker_running_sandbox(req, wid, b->sandbox, ws, &rec) != 1)
        return;
    for (size_t i = 0; i < b->n; i++) {
        snprintf(reason, sizeof(reason), "host=%s headers=%s count=%lld", b->e[i].host,
                 b->e[i].headers, b->e[i].count);
        worker_sandbox_audit(req, wid, ws, &rec, AUDIT_EGRESS_TRANSFORM, reason);
    }
    if (b->dropped > 0) {
        snprintf(reason, sizeof(reason),
                 "%lld more requests changed by rules, past what its proxy could count apart",
                 b->dropped);
        worker_sandbox_audit(req, wid, ws, &rec, AUDIT_EGRESS_TRANSFORM, reason);
    }
    sandbox_record_free(&rec);
    respond_json(req, 200, json_pack("{s:I}", "recorded", (json_int_t)b->n));
}

void h_worker_egress_audit(struct request *req)
{
    json_t *body = request_json_body(req);
    struct egress_audit_body *b = malloc(sizeof(*b));
    char wid[33], err[160];
    int st = -1;

    if (body && b)
        st = egress_audit_parse(body, b, err, sizeof(err));
    json_decref(body);
    if (body && !b)
        respond_error(req, 500, "out of memory");
    else if (body && st != 0)
        respond_error(req, 400, "%s", err);
    else if (body && worker_authenticate(req, wid) == 1)
        record_all(req, wid, b);
    free(b);
}
