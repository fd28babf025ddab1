/* PUT /v1/sandboxes/{id}/network and PUT /sandboxes/{id}/network (E2B), decision
 * 0091 (which replaces 0022 for sandboxes with a proxy). A running sandbox
 * whose egress proxy is there takes the new policy at once: it is put in
 * force and its worker reloads the proxy, whose new connections follow it
 * (open ones keep the policy they were opened under). Otherwise (no proxy
 * now, or none wanted, or paused) it is recorded for the sandbox's next start
 * (a resume, a redelivery) as before, since adding or removing the proxy
 * re-plumbs its network. The rules' secrets are sealed before anything is
 * stored. The workload identity the sandbox was created with is kept: an
 * update carries none. Lookups are in the caller's workspace slot, so another
 * tenant's sandbox answers exactly like a missing one. */
#include "audit.h"
#include "commands.h"
#include "e2b_spec.h"
#include "egress_seal.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_spec_parse.h"
#include "sandbox_store.h"

#include <stdlib.h>
#include <string.h>

#define NEXT_MESSAGE                                                                               \
    "recorded; the running sandbox has no egress proxy to change (or is not running), so the new " \
    "policy applies when it next starts: its next resume (adding or removing a policy needs a "    \
    "resume without memory), or a redelivery"
#define NOW_MESSAGE                                                                                \
    "applied: new connections follow the new policy; connections already open keep the one "       \
    "they were opened under"

enum applied { APPLIED_NOW, APPLIED_NEXT };

/* A sandbox that has not ended: live, or still being created. */
static int updatable(const struct sandbox_record *rec)
{
    return sandbox_is_live(rec) || rec->state == SANDBOX_STATE_PENDING;
}

/* The caller's record of a sandbox that has not ended: 0, or -1 after
 * answering (404 unknown or foreign, ended_status when it has ended, 503). */
static int read_live(struct request *req, struct sandbox_record *rec, int ended_status)
{
    int n =
        token_is_id(req->params[0]) ? sandbox_read(req->rc, req->cred.ws, req->params[0], rec) : 0;
    int ok = n == 1 && updatable(rec);

    if (n < 0)
        respond_store_down(req);
    else if (n == 0 || (!ok && ended_status == 404))
        NOT_FOUND_SANDBOX(req);
    else if (!ok)
        respond_error(req, ended_status,
                      "sandbox has ended: there is no next start to apply a network policy to");
    if (n == 1 && !ok)
        sandbox_record_free(rec);
    return ok ? 0 : -1;
}

/* The workload identity in force ({"tokens"}), or NULL. */
static json_t *current_iam(const struct sandbox_record *rec)
{
    json_t *p = *rec->egress ? json_loads(rec->egress, 0, NULL) : NULL;
    json_t *iam = json_incref(json_object_get(p, "iam"));

    json_decref(p);
    return iam;
}

/* Tells the worker to reload the proxy with sealed (the stored text). */
static int tell_worker(struct request *req, const struct sandbox_record *rec, const char *sealed)
{
    json_t *policy = json_loads(sealed, 0, NULL);

    return command_send_args(req->rc, rec->pool, rec->worker, "egress", rec->id,
                             json_pack("{s:o, s:s}", "egress", policy, "workspace", req->cred.ws));
}

/* Puts plain (NULL: no policy) in force now when it can be, else records it
 * for the next start. 0 with *how, or -1 after answering. */
static int apply(struct request *req, const struct sandbox_record *rec, const char *plain,
                 enum applied *how)
{
    char *sealed = plain ? egress_seal_text(req->conf->server_secret, req->cred.ws, plain) : NULL;
    int n = 3;

    if (plain && !sealed) {
        respond_error(req, 500, "the egress policy's secrets could not be sealed");
        return -1;
    }
    if (sealed)
        n = sandbox_set_egress_live(req->rc, req->cred.ws, rec->id, sealed, rec->worker);
    if (n == 1 && tell_worker(req, rec, sealed) != 0)
        n = -1;
    if (n == 3)
        n = sandbox_set_egress_next(req->rc, req->cred.ws, rec->id, sealed) == 1 ? 2 : -1;
    free(sealed);
    if (n < 0)
        respond_store_down(req);
    else if (n == 0)
        NOT_FOUND_SANDBOX(req);
    if (n <= 0)
        return -1;
    *how = n == 1 ? APPLIED_NOW : APPLIED_NEXT;
    audit_sandbox(req->rc, req->cred.ws, rec->id, AUDIT_NETWORK_UPDATED, req->actor,
                  n == 1 ? "applied now" : "recorded for the next start");
    return 0;
}

/* Reads the body (json), parses it into the plain policy and applies it. */
static int update(struct request *req, int e2b, int ended_status, char **plain, enum applied *how)
{
    struct sandbox_record rec;
    json_t *body, *iam;
    char err[256];
    int status, rc;

    *plain = NULL;
    if (!(body = request_json_body(req)))
        return -1;
    if (read_live(req, &rec, ended_status) != 0) {
        json_decref(body);
        return -1;
    }
    iam = current_iam(&rec);
    status = e2b ? e2b_network_parse_iam(body, iam, plain, err, sizeof(err))
                 : sandbox_network_parse(body, plain, err, sizeof(err));
    json_decref(iam);
    json_decref(body);
    if (status != 0)
        respond_error(req, status < 0 ? 400 : status, "%s", err);
    rc = status == 0 ? apply(req, &rec, *plain, how) : -1;
    sandbox_record_free(&rec);
    return rc;
}

void h_sandbox_network(struct request *req)
{
    enum applied how;
    char *plain;
    json_t *shown;

    if (update(req, 0, 409, &plain, &how) == 0) {
        shown = plain ? json_loads(plain, 0, NULL) : json_null();
        egress_mask(shown);
        respond_json(req, 200,
                     json_pack("{s:s, s:o, s:s, s:s}", "sandbox_id", req->params[0], "egress",
                               shown, "applies", how == APPLIED_NOW ? "now" : "next_start",
                               "message", how == APPLIED_NOW ? NOW_MESSAGE : NEXT_MESSAGE));
    }
    free(plain);
}

/* E2B answers 204 and applies the change live; Corral does when the sandbox
 * has its proxy, and otherwise at its next start (docs/api.md). */
void h_e2b_network(struct request *req)
{
    enum applied how;
    char *plain;

    if (update(req, 1, 404, &plain, &how) == 0)
        respond_empty(req, 204);
    free(plain);
}
