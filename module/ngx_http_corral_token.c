
/*
 * The tokens of ngx_http_corral_module, checked in the handler without a
 * backend call: hex(HMAC-SHA-256(gateway secret, kind ":" S)), compared in
 * constant time, where kind is "envd" (X-Access-Token, port 49983 of a secure
 * sandbox) or "traffic" (e2b-traffic-access-token, any other port of a
 * sandbox whose traffic is not public).
 *
 * Which requests need which token follows what E2B itself refuses:
 *   - port 49983 (envd) of a secure sandbox needs X-Access-Token, except
 *     GET /health, GET|POST /files carrying a signature query parameter and
 *     no X-Access-Token (envd checks the signature), and a CORS preflight;
 *     a token that is present must be right, whatever the path;
 *   - any other port of a sandbox with public traffic off needs
 *     e2b-traffic-access-token; envd's port never does (E2B's proxy skips it
 *     and the SDK never sends that header to envd).
 * The exemptions compare the path as the client sent it (before nginx
 * normalises it), since that is what the sandbox receives.
 *
 * And the gateway signature the data port checks on every request,
 * $corral_gateway_signature: "<unix seconds>:<hex HMAC-SHA-256 of
 * S:P:seconds under the worker key>".
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "ngx_http_corral_module.h"


#define NGX_HTTP_CORRAL_MAC_LEN     32
#define NGX_HTTP_CORRAL_HEX_LEN     64


static ngx_int_t ngx_http_corral_unauthorized(ngx_http_request_t *r);
static ngx_int_t ngx_http_corral_forbidden(ngx_http_request_t *r);
static ngx_int_t ngx_http_corral_token_equal(ngx_http_request_t *r,
    ngx_str_t *secret, char *kind, ngx_str_t *id, ngx_str_t *given);
static ngx_int_t ngx_http_corral_hmac_hex(ngx_str_t *key, ngx_str_t *msg,
    u_char *out);
static ngx_int_t ngx_http_corral_raw_path_is(ngx_http_request_t *r,
    char *path);


ngx_int_t
ngx_http_corral_check_envd(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  token, sig, v;

    rc = ngx_http_corral_header(r, "X-Access-Token", &token);

    if (rc == NGX_ERROR) {
        return ngx_http_corral_unauthorized(r);
    }

    if (rc == NGX_OK) {
        rc = ngx_http_corral_token_equal(r, &clcf->secret, "envd", &ctx->id,
                                         &token);
        if (rc == NGX_OK) {
            return NGX_OK;
        }

        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        return ngx_http_corral_unauthorized(r);
    }

    /* no token: what envd itself lets through without one */

    if (r->method == NGX_HTTP_GET
        && ngx_http_corral_raw_path_is(r, "/health") == NGX_OK)
    {
        return NGX_OK;
    }

    if ((r->method == NGX_HTTP_GET || r->method == NGX_HTTP_POST)
        && ngx_http_corral_raw_path_is(r, "/files") == NGX_OK
        && ngx_http_arg(r, (u_char *) "signature", 9, &sig) == NGX_OK
        && sig.len > 0)
    {
        return NGX_OK;
    }

    if (r->method == NGX_HTTP_OPTIONS
        && ngx_http_corral_header(r, "Origin", &v) == NGX_OK
        && ngx_http_corral_header(r, "Access-Control-Request-Method", &v)
           == NGX_OK)
    {
        return NGX_OK;
    }

    return ngx_http_corral_unauthorized(r);
}


ngx_int_t
ngx_http_corral_check_traffic(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  token;

    rc = ngx_http_corral_header(r, "e2b-traffic-access-token", &token);

    if (rc != NGX_OK) {
        return ngx_http_corral_forbidden(r);
    }

    rc = ngx_http_corral_token_equal(r, &clcf->secret, "traffic", &ctx->id,
                                     &token);
    if (rc == NGX_OK) {
        return NGX_OK;
    }

    if (rc == NGX_ERROR) {
        return NGX_ERROR;
    }

    return ngx_http_corral_forbidden(r);
}


/*
 * A known sandbox, a missing or wrong token: what E2B answers (its envd 401,
 * its edge 403 for the traffic token), so that the SDK says what is wrong
 * instead of "not found". The sandbox id is a 20-character random
 * capability: the status tells only one who holds it that it exists
 * (decision 0069; an unknown id is still 502 "not found").
 */

static ngx_int_t
ngx_http_corral_unauthorized(ngx_http_request_t *r)
{
    return ngx_http_corral_respond(r, NGX_HTTP_UNAUTHORIZED,
                                   "missing or invalid access token: send "
                                   "the sandbox's envdAccessToken in "
                                   "X-Access-Token");
}


static ngx_int_t
ngx_http_corral_forbidden(ngx_http_request_t *r)
{
    return ngx_http_corral_respond(r, NGX_HTTP_FORBIDDEN,
                                   "missing or invalid traffic access token: "
                                   "send the sandbox's trafficAccessToken in "
                                   "e2b-traffic-access-token");
}


/*
 * NGX_OK when given == hex(HMAC-SHA-256(secret, kind ":" id)); the bytes are
 * compared in constant time (the length of a valid token is public).
 */

static ngx_int_t
ngx_http_corral_token_equal(ngx_http_request_t *r, ngx_str_t *secret,
    char *kind, ngx_str_t *id, ngx_str_t *given)
{
    u_char     buf[32 + NGX_HTTP_CORRAL_ID_LEN];
    u_char     expected[NGX_HTTP_CORRAL_HEX_LEN];
    ngx_str_t  msg;

    msg.data = buf;
    msg.len = ngx_snprintf(buf, sizeof(buf), "%s:%V", kind, id) - buf;

    if (ngx_http_corral_hmac_hex(secret, &msg, expected) != NGX_OK) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "corral: HMAC-SHA-256 failed");
        return NGX_ERROR;
    }

    if (given->len != NGX_HTTP_CORRAL_HEX_LEN) {
        return NGX_DECLINED;
    }

    if (CRYPTO_memcmp(expected, given->data, NGX_HTTP_CORRAL_HEX_LEN) != 0) {
        return NGX_DECLINED;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_corral_sign(ngx_http_request_t *r, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route)
{
    u_char     *p;
    time_t      now;
    ngx_str_t   msg;

    now = ngx_time();

    /* "<id>:<port>:<seconds>" */

    msg.data = ngx_pnalloc(r->pool, NGX_HTTP_CORRAL_ID_LEN + 1 + NGX_INT_T_LEN
                                    + 1 + NGX_TIME_T_LEN);
    if (msg.data == NULL) {
        return NGX_ERROR;
    }

    msg.len = ngx_sprintf(msg.data, "%V:%V:%T", &ctx->id, &ctx->port, now)
              - msg.data;

    /* "<seconds>:<hex mac>" */

    ctx->signature.data = ngx_pnalloc(r->pool, NGX_TIME_T_LEN + 1
                                               + NGX_HTTP_CORRAL_HEX_LEN);
    if (ctx->signature.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(ctx->signature.data, "%T:", now);

    if (ngx_http_corral_hmac_hex(&route->key, &msg, p) != NGX_OK) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "corral: HMAC-SHA-256 failed");
        return NGX_ERROR;
    }

    ctx->signature.len = p + NGX_HTTP_CORRAL_HEX_LEN - ctx->signature.data;

    ctx->upstream.data = ngx_pnalloc(r->pool, route->addr.len);
    if (ctx->upstream.data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(ctx->upstream.data, route->addr.data, route->addr.len);
    ctx->upstream.len = route->addr.len;

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_hmac_hex(ngx_str_t *key, ngx_str_t *msg, u_char *out)
{
    u_char        mac[EVP_MAX_MD_SIZE];
    unsigned int  len;

    len = 0;

    if (HMAC(EVP_sha256(), key->data, (int) key->len, msg->data, msg->len,
             mac, &len)
        == NULL
        || len != NGX_HTTP_CORRAL_MAC_LEN)
    {
        return NGX_ERROR;
    }

    ngx_hex_dump(out, mac, NGX_HTTP_CORRAL_MAC_LEN);

    return NGX_OK;
}


/*
 * The path as the client sent it and as nginx normalised it must both be
 * path: "/x/../health" or "//files" reach envd as something else.
 */

static ngx_int_t
ngx_http_corral_raw_path_is(ngx_http_request_t *r, char *path)
{
    size_t   len, plen;
    u_char  *q;

    plen = ngx_strlen(path);

    q = ngx_strlchr(r->unparsed_uri.data,
                    r->unparsed_uri.data + r->unparsed_uri.len, '?');
    len = q ? (size_t) (q - r->unparsed_uri.data) : r->unparsed_uri.len;

    if (len != plen
        || ngx_strncmp(r->unparsed_uri.data, path, plen) != 0
        || r->uri.len != plen
        || ngx_strncmp(r->uri.data, path, plen) != 0)
    {
        return NGX_DECLINED;
    }

    return NGX_OK;
}
