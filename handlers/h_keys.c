/* Owner-only credential routes: API keys and join tokens of the caller's own
 * workspace. A secret is shown once, in the creating answer, and never again. */
#include "handlers.h"
#include "keys_parse.h"
#include "respond.h"
#include "sandbox_view.h"

#include <string.h>

/* Reads an optional body; an absent one is an empty object. */
static json_t *optional_body(struct request *req)
{
    const char *cl = request_header(req, "CONTENT_LENGTH");

    if (!cl || !*cl || strcmp(cl, "0") == 0)
        return json_object();
    return request_json_body(req);
}

/* A credential event: by id, never the secret just made. */
static void audit_credential(struct request *req, const char *event, const char *id,
                             const char *reason)
{
    struct audit_event e = {
        .event = event, .actor = req->actor, .credential = id, .reason = reason};

    audit_append(req->rc, req->cred.ws, &e);
}

void h_key_create(struct request *req)
{
    json_t *body = optional_body(req);
    char id[TOKEN_ID_MAX], token[TOKEN_TEXT_MAX], err[128];
    enum role role;
    int rc;

    if (!body)
        return;
    rc = key_create_parse(body, &role, err, sizeof(err));
    json_decref(body);
    if (rc != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (apikey_create(req->rc, req->conf->server_secret, req->cred.ws, role, id, token) != 0) {
        respond_store_down(req);
        return;
    }
    audit_credential(req, AUDIT_KEY_MINTED, id, role_name(role));
    respond_json(req, 201,
                 json_pack("{s:s, s:s, s:s, s:s}", "id", id, "key", token, "role", role_name(role),
                           "workspace", req->cred.ws));
}

void h_key_delete(struct request *req)
{
    int n = token_is_id(req->params[0]) ? apikey_delete(req->rc, req->cred.ws, req->params[0]) : 0;

    if (n == 1)
        audit_credential(req, AUDIT_KEY_REVOKED, req->params[0], NULL);
    respond_change(req, n, "key");
}

void h_jointoken_create(struct request *req)
{
    json_t *body = optional_body(req);
    char id[TOKEN_ID_MAX], token[TOKEN_TEXT_MAX], expires[40], err[128];
    long ttl;
    int64_t expires_ms;
    int rc;

    if (!body)
        return;
    rc = jointoken_create_parse(body, &ttl, err, sizeof(err));
    json_decref(body);
    if (rc != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (jointoken_create(req->rc, req->conf->server_secret, req->cred.ws, ttl, id, token,
                         &expires_ms) != 0) {
        respond_store_down(req);
        return;
    }
    format_time_ms(expires_ms, expires, sizeof(expires));
    audit_credential(req, AUDIT_JOIN_TOKEN_MINTED, id, NULL);
    respond_json(req, 201,
                 json_pack("{s:s, s:s, s:s, s:s}", "id", id, "token", token, "workspace",
                           req->cred.ws, "expires_at", expires));
}

void h_jointoken_delete(struct request *req)
{
    int n =
        token_is_id(req->params[0]) ? jointoken_revoke(req->rc, req->cred.ws, req->params[0]) : 0;

    if (n == 1)
        audit_credential(req, AUDIT_JOIN_TOKEN_REVOKED, req->params[0], NULL);
    respond_change(req, n, "join token");
}
