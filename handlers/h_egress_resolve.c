/* POST /v1/worker/egress-resolve (decision 0090): a worker's egress proxy
 * asks, for one request of a sandbox it runs, the current values of the
 * workspace's secrets and fresh workload identity tokens it names.
 *
 *   {"sandbox": ID, "host": "api.example.com", "secrets": [name...], "tokens": [name...]}
 *   -> 200 {"secrets": {name: value}, "tokens": {name: jwt}}
 *
 * Authenticated as the heartbeat is. Only for a sandbox placed on the
 * calling worker and running: any other (absent, another pool's or worker's,
 * pending, paused, ended) is the same 404, so a worker learns nothing of
 * sandboxes not its own, and minting stops once the sandbox is killed. A
 * token is one the sandbox's egress policy defines ("iam": {"tokens"}); a
 * secret one of the sandbox's workspace: any other name is 422 naming it,
 * nothing answered. One audit event per answer, names only, never a value. */
#include "audit.h"
#include "clock.h"
#include "egress_resolve_parse.h"
#include "identity_jwt.h"
#include "identity_signer.h"
#include "respond.h"
#include "sandbox_store.h"
#include "secrets_routes.h"
#include "worker_registry.h"
#include "worker_sandbox.h"

#include <stdlib.h>
#include <string.h>

/* Frees an answer's object of values, wiping each value first. */
static void wipe(json_t *values)
{
    const char *k;
    json_t *v;

    json_object_foreach(values, k, v)
    {
        explicit_bzero((char *)json_string_value(v), json_string_length(v));
    }
    json_decref(values);
}

/* Every secret's current value into out; 0, or -1 after answering. */
static int secrets_of(struct request *req, const char *ws, const struct resolve_body *b,
                      json_t *out)
{
    char *value;

    for (size_t i = 0; i < b->nsecrets; i++) {
        int found = secret_resolve(req->rc, ws, b->secrets[i], req->conf->server_secret, &value);
        if (found < 0)
            respond_store_down(req);
        else if (found == 0)
            respond_error(req, 422, "secrets: '%s' is not a secret of the sandbox's workspace",
                          b->secrets[i]);
        if (found != 1)
            return -1;
        json_object_set_new(out, b->secrets[i], json_string(value));
        explicit_bzero(value, strlen(value));
        free(value);
    }
    return 0;
}

/* Every token minted into out; 0, or -1 after answering. Each is checked
 * against the policy before any is minted. */
static int tokens_of(struct request *req, const char *ws, const struct sandbox_record *rec,
                     const struct resolve_body *b, json_t *out)
{
    char aud[RESOLVE_NAMES_MAX][RESOLVE_AUDIENCE_MAX], jwt[IDENTITY_JWT_MAX];
    const char *host = request_header(req, "CORRAL_HOST");
    int made;

    for (size_t i = 0; i < b->ntokens; i++)
        if (!egress_resolve_token(rec->egress, b->tokens[i], aud[i])) {
            respond_error(req, 422, "tokens: '%s' is not defined in the sandbox's iam.tokens",
                          b->tokens[i]);
            return -1;
        }
    if (!host || !*host)
        host = request_header(req, "HTTP_HOST");
    for (size_t i = 0; i < b->ntokens; i++) {
        made = identity_mint(req->rc, req->conf->server_secret, host, ws, rec->id, aud[i],
                             clock_now_ms() / 1000, jwt, sizeof(jwt));
        if (made == -2)
            respond_error(req, 400, "Host: a host name (and port) required");
        else if (made != 0)
            respond_store_down(req);
        if (made != 0)
            return -1;
        json_object_set_new(out, b->tokens[i], json_string(jwt));
    }
    return 0;
}

/* egress_resolve by worker:<wid>, about the sandbox: host and names only. */
static void audit_resolve(struct request *req, const char *wid, const char *ws,
                          const struct sandbox_record *rec, const struct resolve_body *b)
{
    json_t *o = json_pack("{s:s, s:[], s:[]}", "host", b->host, "secrets", "tokens");
    char *reason;

    for (size_t i = 0; o && i < b->nsecrets; i++)
        json_array_append_new(json_object_get(o, "secrets"), json_string(b->secrets[i]));
    for (size_t i = 0; o && i < b->ntokens; i++)
        json_array_append_new(json_object_get(o, "tokens"), json_string(b->tokens[i]));
    reason = o ? json_dumps(o, JSON_COMPACT) : NULL;
    worker_sandbox_audit(req, wid, ws, rec, AUDIT_EGRESS_RESOLVE, reason);
    free(reason);
    json_decref(o);
}

static void resolve(struct request *req, const char *wid, const struct resolve_body *b)
{
    struct sandbox_record rec;
    char ws[33];
    json_t *secrets, *tokens;

    if (worker_running_sandbox(req, wid, b->sandbox, ws, &rec) != 1)
        return;
    secrets = json_object();
    tokens = json_object();
    if (tokens_of(req, ws, &rec, b, tokens) == 0 && secrets_of(req, ws, b, secrets) == 0) {
        audit_resolve(req, wid, ws, &rec, b);
        respond_json(req, 200, json_pack("{s:O, s:O}", "secrets", secrets, "tokens", tokens));
    }
    wipe(secrets);
    json_decref(tokens);
    sandbox_record_free(&rec);
}

void h_worker_egress_resolve(struct request *req)
{
    json_t *body = request_json_body(req);
    struct resolve_body b;
    char wid[33], err[160];
    int st;

    if (!body)
        return;
    st = egress_resolve_parse(body, &b, err, sizeof(err));
    json_decref(body);
    if (st != 0)
        respond_error(req, 400, "%s", err);
    else if (worker_authenticate(req, wid) == 1)
        resolve(req, wid, &b);
}
