
/*
 * The preaccess handler of ngx_http_corral_module: which sandbox S and port
 * P a request addresses, S's route, and whether the request is admitted.
 *
 * The route comes from a subrequest to an internal location (the way
 * auth_request waits for another location: a subrequest, a post-subrequest
 * handler, the phase handler called again once it is done), whose answer is
 * in its response headers (X-Corral-Sandbox-Id, X-Corral-Data-Addr,
 * X-Corral-Data-Key, X-Corral-Secure, X-Corral-Public: the subrequest's
 * upstream headers, as auth_request_set reads them; the body is discarded).
 * Answers, 404s included, are cached (ngx_http_corral_cache.c), so most
 * requests make no subrequest. The tokens are checked in
 * ngx_http_corral_token.c.
 *
 * An unknown, ended or paused sandbox, a malformed id and a route outside
 * corral_upstream_allow get one answer, 502 {"sandboxId":S,"message":"The
 * sandbox was not found","code":502} (ngx_http_corral_not_found; decisions
 * 32 and 33). A known sandbox with a missing or wrong token gets what E2B
 * answers: 401 for envd's token, 403 for the traffic token (decision 0069).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "data_addr.h"
#include "ngx_http_corral_module.h"


#define NGX_HTTP_CORRAL_ENVD_PORT   49983
#define NGX_HTTP_CORRAL_NOT_FOUND_TAIL                                        \
    "\"message\":\"The sandbox was not found\",\"code\":502}"


static ngx_int_t ngx_http_corral_done(ngx_http_request_t *r, void *data,
    ngx_int_t rc);
static ngx_int_t ngx_http_corral_target(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx);
static ngx_int_t ngx_http_corral_target_headers(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *port);
static ngx_int_t ngx_http_corral_lookup(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx);
static ngx_int_t ngx_http_corral_parse_answer(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_answer_read(ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_answer_check(ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_masked_host(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_admit(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_upstream_allowed(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_list_header(ngx_list_t *headers, char *name,
    ngx_str_t *value);
static ngx_int_t ngx_http_corral_flag(ngx_list_t *headers, char *name,
    ngx_uint_t *value);
static ngx_int_t ngx_http_corral_valid_id(ngx_str_t *id);
static ngx_int_t ngx_http_corral_valid_port(ngx_str_t *port);
static ngx_int_t ngx_http_corral_not_found(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx);


ngx_int_t
ngx_http_corral_handler(ngx_http_request_t *r)
{
    ngx_int_t                    rc;
    ngx_http_corral_ctx_t       *ctx;
    ngx_http_corral_route_t      route;
    ngx_http_corral_loc_conf_t  *clcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_corral_module);

    if (!clcf->enable || r != r->main) {
        return NGX_DECLINED;
    }

    ngx_log_debug0(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "corral handler");

    ctx = ngx_http_get_module_ctx(r, ngx_http_corral_module);

    if (ctx != NULL) {
        if (!ctx->done) {
            return NGX_AGAIN;
        }

        /* the lookup subrequest has finished: read, cache, admit */

        rc = ngx_http_corral_parse_answer(r, ctx, &route);

        if (rc != NGX_OK) {
            return ngx_http_corral_respond(r, NGX_HTTP_SERVICE_UNAVAILABLE,
                                        "sandbox route lookup unavailable; "
                                        "retry shortly");
        }

        ngx_http_corral_cache_put(r, ctx, &route);

        return ngx_http_corral_admit(r, clcf, ctx, &route);
    }

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_corral_ctx_t));
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_corral_target(r, clcf, ctx);

    if (rc != NGX_OK) {
        return rc;
    }

    ngx_http_set_ctx(r, ctx, ngx_http_corral_module);

    if (!clcf->cache_bypass
        && ngx_http_corral_cache_get(r, ctx, &route) == NGX_OK)
    {
        ctx->done = 1;
        return ngx_http_corral_admit(r, clcf, ctx, &route);
    }

    return ngx_http_corral_lookup(r, clcf, ctx);
}


static ngx_int_t
ngx_http_corral_done(ngx_http_request_t *r, void *data, ngx_int_t rc)
{
    ngx_http_corral_ctx_t  *ctx = data;

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "corral lookup done s:%ui rc:%i",
                   r->headers_out.status, rc);

    ctx->done = 1;
    ctx->status = r->headers_out.status;

    if (rc == NGX_ERROR || rc >= NGX_HTTP_SPECIAL_RESPONSE) {
        ctx->status = NGX_HTTP_BAD_GATEWAY;
    }

    return rc;
}


static ngx_int_t
ngx_http_corral_target(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx)
{
    u_char     *p, *last, *dash;
    ngx_int_t   rc;
    ngx_str_t   host, id, port;

    host = r->headers_in.server;

    /* Host "<port>-<id>.<domain>" (ngx_http_validate_host lowercased it) */

    if (clcf->domain.len && host.len > clcf->domain.len + 1) {
        p = host.data + host.len - clcf->domain.len;

        if (p[-1] == '.'
            && ngx_strncmp(p, clcf->domain.data, clcf->domain.len) == 0)
        {
            last = p - 1;
            dash = ngx_strlchr(host.data, last, '-');

            if (dash == NULL) {
                return ngx_http_corral_not_found(r, ctx);
            }

            port.data = host.data;
            port.len = dash - host.data;
            id.data = dash + 1;
            id.len = last - id.data;

            goto found;
        }
    }

    rc = ngx_http_corral_target_headers(r, &id, &port);

    if (rc != NGX_OK) {
        return rc;
    }

found:

    if (ngx_http_corral_valid_id(&id) != NGX_OK) {
        return ngx_http_corral_not_found(r, ctx);
    }

    if (ngx_http_corral_valid_port(&port) != NGX_OK) {
        return ngx_http_corral_respond(r, NGX_HTTP_BAD_REQUEST,
                                       "sandbox port must be a number "
                                       "from 1 to 65535");
    }

    ctx->id = id;
    ctx->port = port;
    ctx->port_n = ngx_atoi(port.data, port.len);

    return NGX_OK;
}


/* no host under corral_domain: the E2B headers (E2B_SANDBOX_URL mode) */

static ngx_int_t
ngx_http_corral_target_headers(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *port)
{
    ngx_int_t  rc_id, rc_port;

    rc_id = ngx_http_corral_header(r, "E2b-Sandbox-Id", id);
    rc_port = ngx_http_corral_header(r, "E2b-Sandbox-Port", port);

    if (rc_id == NGX_ERROR || rc_port == NGX_ERROR) {
        return ngx_http_corral_respond(r, NGX_HTTP_BAD_REQUEST,
                                       "E2b-Sandbox-Id and E2b-Sandbox-Port "
                                       "may each be sent once");
    }

    if (rc_id == NGX_DECLINED) {
        return ngx_http_corral_respond(r, NGX_HTTP_NOT_FOUND,
                                       "no sandbox addressed: use the host "
                                       "<port>-<sandbox id>.<domain> or the "
                                       "headers E2b-Sandbox-Id and "
                                       "E2b-Sandbox-Port");
    }

    if (rc_port == NGX_DECLINED) {
        return ngx_http_corral_respond(r, NGX_HTTP_BAD_REQUEST,
                                       "E2b-Sandbox-Port is missing");
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_lookup(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx)
{
    u_char                      *p;
    ngx_str_t                    uri;
    ngx_http_request_t          *sr;
    ngx_http_post_subrequest_t  *ps;

    uri.len = clcf->lookup.len + ctx->id.len;
    uri.data = ngx_pnalloc(r->pool, uri.len);
    if (uri.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(uri.data, clcf->lookup.data, clcf->lookup.len);
    ngx_memcpy(p, ctx->id.data, ctx->id.len);

    ps = ngx_palloc(r->pool, sizeof(ngx_http_post_subrequest_t));
    if (ps == NULL) {
        return NGX_ERROR;
    }

    ps->handler = ngx_http_corral_done;
    ps->data = ctx;

    if (ngx_http_subrequest(r, &uri, NULL, &sr, ps,
                            NGX_HTTP_SUBREQUEST_WAITED)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the answer is in the headers: the body is discarded, as auth_request */

    sr->header_only = 1;

    /*
     * a fake request body, as auth_request does: the lookup must not read
     * or forward the client's body
     */

    sr->request_body = ngx_pcalloc(r->pool, sizeof(ngx_http_request_body_t));
    if (sr->request_body == NULL) {
        return NGX_ERROR;
    }

    ctx->subrequest = sr;
    ctx->secret = clcf->secret;

    return NGX_AGAIN;
}


static ngx_int_t
ngx_http_corral_parse_answer(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route)
{
    ngx_memzero(route, sizeof(ngx_http_corral_route_t));

    if (ctx->status == NGX_HTTP_NOT_FOUND) {
        return NGX_OK;
    }

    /*
     * 409: the sandbox exists but is paused; a resume may come from any
     * gateway host at any moment, so this miss is not cached (issue 26)
     */

    if (ctx->status == NGX_HTTP_CONFLICT) {
        route->paused = 1;
        return NGX_OK;
    }

    if (ctx->status != NGX_HTTP_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "corral route lookup answered %ui", ctx->status);
        return NGX_ERROR;
    }

    if (ctx->subrequest->upstream == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "corral route lookup: not answered by an upstream");
        return NGX_ERROR;
    }

    if (ngx_http_corral_answer_read(ctx, route) != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "corral route lookup: malformed answer for %V",
                      &ctx->id);
        return NGX_ERROR;
    }

    if (ngx_http_corral_answer_check(route) != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "corral route lookup: invalid addr or worker_key for %V",
                      &ctx->id);
        return NGX_ERROR;
    }

    route->found = 1;

    /*
     * a tunnelled worker whose tunnel no daemon holds now: the lookup names
     * the marker instead of an address (store/tunnel_store.h)
     */

    if (route->addr.len == sizeof("tunnel") - 1
        && ngx_strncmp(route->addr.data, "tunnel", route->addr.len) == 0)
    {
        route->unreachable = 1;
    }

    return NGX_OK;
}


/* the lookup's own answer headers, each exactly once, for this sandbox */

static ngx_int_t
ngx_http_corral_answer_read(ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route)
{
    ngx_str_t    sid;
    ngx_list_t  *answer;

    answer = &ctx->subrequest->upstream->headers_in.headers;

    if (ngx_http_corral_list_header(answer, "X-Corral-Sandbox-Id", &sid)
        != NGX_OK
        || sid.len != ctx->id.len
        || ngx_strncmp(sid.data, ctx->id.data, sid.len) != 0
        || ngx_http_corral_list_header(answer, "X-Corral-Data-Addr",
                                       &route->addr)
           != NGX_OK
        || ngx_http_corral_list_header(answer, "X-Corral-Data-Key",
                                       &route->key)
           != NGX_OK
        || ngx_http_corral_flag(answer, "X-Corral-Secure", &route->secure)
           != NGX_OK
        || ngx_http_corral_flag(answer, "X-Corral-Public", &route->public)
           != NGX_OK)
    {
        return NGX_DECLINED;
    }

    /* optional: only a sandbox created with maskRequestHost has one */

    switch (ngx_http_corral_list_header(answer, "X-Corral-Mask-Host",
                                        &route->mask))
    {
    case NGX_OK:
        break;
    case NGX_DECLINED:
        ngx_str_null(&route->mask);
        break;
    default:
        return NGX_DECLINED;
    }

    return NGX_OK;
}


/* the address goes into proxy_pass: host characters and a port only */

static ngx_int_t
ngx_http_corral_answer_check(ngx_http_corral_route_t *route)
{
    u_char  *p;

    if (route->addr.len == 0 || route->addr.len > NGX_HTTP_CORRAL_ADDR_MAX) {
        return NGX_DECLINED;
    }

    for (p = route->addr.data; p < route->addr.data + route->addr.len; p++) {
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z')
              || (*p >= 'A' && *p <= 'Z') || *p == '.' || *p == '-'
              || *p == ':' || *p == '[' || *p == ']'))
        {
            return NGX_DECLINED;
        }
    }

    if (route->key.len == 0 || route->key.len > NGX_HTTP_CORRAL_KEY_MAX) {
        return NGX_DECLINED;
    }

    /* it goes into the Host header: host characters and "${PORT}" only */

    if (route->mask.len > NGX_HTTP_CORRAL_MASK_MAX) {
        return NGX_DECLINED;
    }

    for (p = route->mask.data; p < route->mask.data + route->mask.len; p++) {
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z')
              || (*p >= 'A' && *p <= 'Z') || *p == '.' || *p == '-'
              || *p == ':' || *p == '[' || *p == ']' || *p == '$'
              || *p == '{' || *p == '}'))
        {
            return NGX_DECLINED;
        }
    }

    return NGX_OK;
}


/* the Host the sandbox's service sees: its mask with "${PORT}" as the port */

static ngx_int_t
ngx_http_corral_masked_host(ngx_http_request_t *r, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route)
{
    u_char     *p, *src, *end;
    size_t      len;
    ngx_str_t   var = ngx_string("${PORT}");

    if (route->mask.len == 0) {
        return NGX_OK;
    }

    len = 0;
    src = route->mask.data;
    end = src + route->mask.len;

    while (src < end) {
        if ((size_t) (end - src) >= var.len
            && ngx_strncmp(src, var.data, var.len) == 0)
        {
            len += ctx->port.len;
            src += var.len;
        } else {
            len++;
            src++;
        }
    }

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ctx->host.data = p;
    ctx->host.len = len;

    for (src = route->mask.data; src < end; /* void */) {
        if ((size_t) (end - src) >= var.len
            && ngx_strncmp(src, var.data, var.len) == 0)
        {
            p = ngx_cpymem(p, ctx->port.data, ctx->port.len);
            src += var.len;
        } else {
            *p++ = *src++;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_admit(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route)
{
    ngx_int_t  rc;

    if (!route->found
        || (!route->unreachable
            && ngx_http_corral_upstream_allowed(r, clcf, ctx, route) != NGX_OK))
    {
        return ngx_http_corral_not_found(r, ctx);
    }

    if (ctx->port_n == NGX_HTTP_CORRAL_ENVD_PORT) {
        if (route->secure) {
            rc = ngx_http_corral_check_envd(r, clcf, ctx);
            if (rc != NGX_OK) {
                return rc;
            }
        }

    } else if (!route->public) {
        rc = ngx_http_corral_check_traffic(r, clcf, ctx);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    /* told only to a caller whose tokens passed, as any answer about it */

    if (route->unreachable) {
        return ngx_http_corral_respond(r, NGX_HTTP_BAD_GATEWAY,
                   "worker unreachable: its tunnel is down; retry shortly");
    }

    if (ngx_http_corral_sign(r, ctx, route) != NGX_OK
        || ngx_http_corral_masked_host(r, ctx, route) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /*
     * Admitted: NGX_DECLINED lets the preaccess phase go on to limit_conn
     * (NGX_OK would skip to the access phase), which then counts this
     * request under $corral_sandbox_id, a sandbox whose route and tokens
     * were just checked (decision 0068).
     */

    return NGX_DECLINED;
}


/*
 * The route's address must be an IP literal and port inside
 * corral_upstream_allow: corral-api checked it at the handshake, but a record
 * edited in Redis, or a worker enrolled before the list was narrowed, must not
 * make the gateway connect elsewhere (decision 32). Logged, since it means
 * the state store holds an address it should not.
 */

static ngx_int_t
ngx_http_corral_upstream_allowed(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route)
{
    char  why[192];

    if (data_addr_check(clcf->upstream_allow, (char *) route->addr.data,
                        route->addr.len, NULL, why, sizeof(why))
        == 0)
    {
        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                  "corral: sandbox %V routes to \"%V\", refused: %s",
                  &ctx->id, &route->addr, why);

    return NGX_DECLINED;
}


/*
 * NGX_OK with the value of the one header called name (of the request, or
 * of a list: the lookup's answer), NGX_DECLINED when it is absent,
 * NGX_ERROR when it was sent more than once.
 */

ngx_int_t
ngx_http_corral_header(ngx_http_request_t *r, char *name, ngx_str_t *value)
{
    return ngx_http_corral_list_header(&r->headers_in.headers, name, value);
}


static ngx_int_t
ngx_http_corral_list_header(ngx_list_t *headers, char *name, ngx_str_t *value)
{
    size_t            len;
    ngx_uint_t        i, n;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    len = ngx_strlen(name);
    n = 0;

    part = &headers->part;
    h = part->elts;

    for (i = 0; /* void */ ; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                break;
            }

            part = part->next;
            h = part->elts;
            i = 0;
        }

        if (h[i].hash == 0
            || h[i].key.len != len
            || ngx_strncasecmp(h[i].key.data, (u_char *) name, len) != 0)
        {
            continue;
        }

        *value = h[i].value;
        n++;
    }

    if (n == 0) {
        return NGX_DECLINED;
    }

    return n == 1 ? NGX_OK : NGX_ERROR;
}


static ngx_int_t
ngx_http_corral_valid_id(ngx_str_t *id)
{
    ngx_uint_t  i;

    if (id->len != NGX_HTTP_CORRAL_ID_LEN) {
        return NGX_DECLINED;
    }

    for (i = 0; i < id->len; i++) {
        if (!((id->data[i] >= '0' && id->data[i] <= '9')
              || (id->data[i] >= 'a' && id->data[i] <= 'f')))
        {
            return NGX_DECLINED;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_valid_port(ngx_str_t *port)
{
    ngx_int_t  n;

    if (port->len == 0 || port->len > 5 || port->data[0] == '0') {
        return NGX_DECLINED;
    }

    n = ngx_atoi(port->data, port->len);

    if (n == NGX_ERROR || n < 1 || n > 65535) {
        return NGX_DECLINED;
    }

    return NGX_OK;
}


/*
 * A yes/no header of the lookup answer: exactly "1" or "0", once.
 */

static ngx_int_t
ngx_http_corral_flag(ngx_list_t *headers, char *name, ngx_uint_t *value)
{
    ngx_str_t  v;

    if (ngx_http_corral_list_header(headers, name, &v) != NGX_OK
        || v.len != 1 || (v.data[0] != '0' && v.data[0] != '1'))
    {
        return NGX_DECLINED;
    }

    *value = v.data[0] == '1';

    return NGX_OK;
}


/*
 * Sends {"code":N,"message":"..."} and finalizes the request; the access
 * phase is told NGX_DONE. message is one of the module's constants, or
 * built from them and a validated sandbox id: nothing in it needs escaping.
 */

ngx_int_t
ngx_http_corral_respond(ngx_http_request_t *r, ngx_uint_t status,
    char *message)
{
    ngx_str_t                 type;
    ngx_http_complex_value_t  cv;

    ngx_memzero(&cv, sizeof(ngx_http_complex_value_t));

    cv.value.len = sizeof("{\"code\":000,\"message\":\"\"}") - 1
                   + ngx_strlen(message);
    cv.value.data = ngx_pnalloc(r->pool, cv.value.len);
    if (cv.value.data == NULL) {
        return NGX_ERROR;
    }

    cv.value.len = ngx_sprintf(cv.value.data,
                               "{\"code\":%03ui,\"message\":\"%s\"}",
                               status, message)
                   - cv.value.data;

    ngx_str_set(&type, "application/json");

    ngx_http_finalize_request(r, ngx_http_send_response(r, status, &type, &cv));

    return NGX_DONE;
}


/*
 * The one answer for a sandbox this client may not reach: unknown, ended, a
 * malformed id, or a known sandbox with a missing or wrong token (or a route
 * outside corral_upstream_allow). E2B's edge answers 502 "not found" for a
 * sandbox it cannot find, and the SDK reads 502 as "not running"; the same
 * status, body and headers for every case, so that a wrong token does not
 * tell whether the sandbox exists (decision 33).
 */

static ngx_int_t
ngx_http_corral_not_found(ngx_http_request_t *r, ngx_http_corral_ctx_t *ctx)
{
    ngx_str_t                 type;
    ngx_http_complex_value_t  cv;

    ngx_memzero(&cv, sizeof(ngx_http_complex_value_t));

    /* E2B's edge answer; a malformed id is not echoed (it may hold quotes) */
    cv.value.len = sizeof("{\"sandboxId\":\"\",") - 1 + NGX_HTTP_CORRAL_ID_LEN
                   + sizeof(NGX_HTTP_CORRAL_NOT_FOUND_TAIL) - 1;
    cv.value.data = ngx_pnalloc(r->pool, cv.value.len);
    if (cv.value.data == NULL) {
        return NGX_ERROR;
    }

    if (ngx_http_corral_valid_id(&ctx->id) == NGX_OK) {
        cv.value.len = ngx_sprintf(cv.value.data, "{\"sandboxId\":\"%V\","
                                   NGX_HTTP_CORRAL_NOT_FOUND_TAIL, &ctx->id)
                       - cv.value.data;

    } else {
        cv.value.len = ngx_sprintf(cv.value.data, "{"
                                   NGX_HTTP_CORRAL_NOT_FOUND_TAIL)
                       - cv.value.data;
    }

    ngx_str_set(&type, "application/json");

    ngx_http_finalize_request(r, ngx_http_send_response(r,
                                  NGX_HTTP_BAD_GATEWAY, &type, &cv));

    return NGX_DONE;
}
