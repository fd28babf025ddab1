/* POST /v1/worker/registry-token: a bearer token for Corral's registry
 * (docs/templates.md, decision 0079).
 *
 *   {"repository": "corral/w<ws>/<tpl>", "push": false}
 *   -> 200 {"token": "<JWT>", "expires_in": 300}
 *
 * Authenticated as the heartbeat is. The rule is registry_decide's: pull on
 * the fleet's repositories and on the worker's own workspace's (every
 * workspace's for the unscoped fleet); push only on the target of a build in
 * progress on this worker (template_store's build_push_admit). A refusal
 * is 403 naming why; 503 when corral.conf names no registry, or while a
 * registry garbage collection holds pushes (decision 0081: the worker
 * retries). A token is good for 300 s and is never stored or logged; a push
 * token's build id and expiry are recorded as a push in flight. */
#include "clock.h"
#include "handlers.h"
#include "registry_token.h"
#include "registry_token_parse.h"
#include "respond.h"
#include "template_store.h"
#include "worker_registry.h"

#include <string.h>

/* Signs and answers the grant a (already decided). */
static void answer_token(struct request *req, const char *wid, const struct registry_ask *a)
{
    char token[REGISTRY_TOKEN_MAX];
    struct registry_grant g = {.issuer = req->conf->registry_issuer,
                               .service = req->conf->registry_service,
                               .subject = wid,
                               .repo = a->repo,
                               .actions = a->push ? "pull,push" : "pull",
                               .now = clock_now_ms() / 1000,
                               .ttl_s = REGISTRY_TOKEN_TTL_S};

    if (registry_token_sign(req->conf->registry_key_pem, &g, token, sizeof(token)) != 0) {
        respond_error(req, 500, "could not sign a registry token");
        return;
    }
    respond_json(req, 200,
                 json_pack("{s:s, s:i}", "token", token, "expires_in", REGISTRY_TOKEN_TTL_S));
    explicit_bzero(token, sizeof(token));
}

void h_worker_registry_token(struct request *req)
{
    char wid[33], err[160];
    struct registry_ask a;
    enum registry_verdict v;
    json_t *body = request_json_body(req);
    int st, push_ok = 0;

    if (!body)
        return;
    st = registry_ask_parse(body, &a, err, sizeof(err));
    json_decref(body);
    if (st != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (worker_authenticate(req, wid) != 1)
        return;
    if (!req->conf->registry[0]) {
        respond_error(req, 503, "no registry is configured (corral.conf registry)");
        return;
    }
    if (a.push)
        push_ok =
            build_push_admit(req->rc, wid, a.repo, clock_now_ms() / 1000 + REGISTRY_TOKEN_TTL_S);
    if (push_ok == -2) {
        respond_error(req, 503, "%s: the registry is collecting garbage; pushes wait, retry",
                      a.repo);
        return;
    }
    if (push_ok < 0) {
        respond_store_down(req);
        return;
    }
    v = registry_decide(req->cred.ws, &a, push_ok);
    if (v != REGISTRY_GRANTED)
        respond_error(req, 403, "%s: %s", a.repo, registry_verdict_message(v));
    else
        answer_token(req, wid, &a);
}
