/* A workspace's workload identity (decision 0090): its OpenID discovery
 * document and its JWKS, public (a relying party fetches them with no
 * credential), and the owner's key rotation. The issuer is
 * https://<Host>/identity/<ws>, Host as the client sent it (corral.conf has
 * no public URL of the API). A workspace that does not exist is 404; one
 * that has not minted yet publishes no key. */
#include "accounts.h"
#include "audit.h"
#include "clock.h"
#include "identity_jwt.h"
#include "identity_signer.h"
#include "respond.h"
#include "sandbox_view.h"
#include "secrets_routes.h"

#include <stdlib.h>

/* The issuer of ws from the request's Host; 0, or -1 after answering. */
static int issuer_of(struct request *req, const char *ws, char iss[IDENTITY_ISSUER_MAX])
{
    const char *host = request_header(req, "CORRAL_HOST");
    char td[IDENTITY_HOST_MAX];

    if (!host || !*host)
        host = request_header(req, "HTTP_HOST");
    if (identity_issuer(host, ws, iss, td) != 0) {
        respond_error(req, 400, "Host: a host name (and port) required");
        return -1;
    }
    return 0;
}

/* The path's workspace when it exists; 0, or -1 after answering. */
static int public_workspace(struct request *req, char iss[IDENTITY_ISSUER_MAX])
{
    const char *ws = req->params[0];
    int found = token_is_id(ws) ? workspace_exists(req->rc, ws) : 0;

    if (found < 0)
        respond_store_down(req);
    else if (found == 0)
        respond_error(req, 404, "workspace not found");
    else
        return issuer_of(req, ws, iss);
    return -1;
}

void h_identity_discovery(struct request *req)
{
    char iss[IDENTITY_ISSUER_MAX], jwks[IDENTITY_ISSUER_MAX + 16];

    if (public_workspace(req, iss) != 0)
        return;
    snprintf(jwks, sizeof(jwks), "%s/jwks.json", iss);
    respond_add_header(req, "Cache-Control", "public, max-age=60");
    respond_json(req, 200,
                 json_pack("{s:s, s:s, s:[s], s:[s], s:[s]}", "issuer", iss, "jwks_uri", jwks,
                           "id_token_signing_alg_values_supported", "ES256",
                           "response_types_supported", "id_token", "subject_types_supported",
                           "public"));
}

static json_t *jwk(const struct idkey_public *k)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "kty", "EC", "crv", "P-256", "x", k->x,
                     "y", k->y, "kid", k->kid, "alg", "ES256", "use", "sig");
}

/* The current key and those rotated out whose tokens may still be valid. */
void h_identity_jwks(struct request *req)
{
    char iss[IDENTITY_ISSUER_MAX];
    struct idkey_public keys[IDKEY_PUBLISHED_MAX];
    size_t n;
    json_t *arr;

    if (public_workspace(req, iss) != 0)
        return;
    if (idkey_published(req->rc, req->params[0], clock_now_ms(), keys, &n) != 0) {
        respond_store_down(req);
        return;
    }
    arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, jwk(&keys[i]));
    respond_add_header(req, "Cache-Control", "public, max-age=60");
    respond_json(req, 200, json_pack("{s:o}", "keys", arr));
}

static void audit_rotate(struct request *req, const char *kid, const char *previous)
{
    json_t *o = json_pack("{s:s, s:s}", "kid", kid, "previous", previous);
    char *reason = o ? json_dumps(o, JSON_COMPACT) : NULL;
    struct audit_event e = {
        .event = AUDIT_IDENTITY_KEY_ROTATE, .actor = req->actor, .reason = reason};

    audit_append(req->rc, req->cred.ws, &e);
    free(reason);
    json_decref(o);
}

/* A new signing key; the old one stays in the JWKS for a token's life. */
void h_identity_rotate(struct request *req)
{
    struct idkey_public pub;
    char previous[IDKEY_KID_MAX], until[40];
    long long now = clock_now_ms();
    json_t *o;

    if (identity_rotate(req->rc, req->cred.ws, req->conf->server_secret, now, &pub, previous) !=
        0) {
        respond_store_down(req);
        return;
    }
    audit_rotate(req, pub.kid, previous);
    o = json_pack("{s:s}", "kid", pub.kid);
    if (*previous) {
        format_time_ms(now + IDENTITY_TOKEN_TTL_S * 1000LL, until, sizeof(until));
        json_object_set_new(o, "previous_kid", json_string(previous));
        json_object_set_new(o, "previous_published_until", json_string(until));
    }
    respond_json(req, 200, o);
}
