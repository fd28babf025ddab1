
/*
 * ngx_http_corral_module: the data plane of Corral in nginx.
 *
 * A preaccess-phase handler that, for a request addressed to port P of
 * sandbox S (Host "P-S.<domain>", or the E2B headers E2b-Sandbox-Id and
 * E2b-Sandbox-Port), resolves the worker's data port, checks the sandbox's
 * tokens and sets the variables proxy_pass and proxy_set_header use:
 *
 *     $corral_upstream           the worker's data port, "IP:port", inside
 *                                corral_upstream_allow
 *     $corral_sandbox_id         S
 *     $corral_sandbox_port       P
 *     $corral_gateway_signature  "<unix seconds>:<hex HMAC-SHA-256 of
 *                                 S:P:seconds under the worker key>"
 *     $corral_lookup_key         the gateway secret, defined only inside the
 *                                module's own lookup subrequest (for
 *                                fastcgi_param CORRAL_GATEWAY_KEY), so the
 *                                secret need not be written into nginx.conf
 *
 * proxy_pass names the upstream corral_data, whose balancer
 * (ngx_http_corral_balancer.c) connects to $corral_upstream, so that nginx's
 * keepalive can keep connections to the data ports (decision 0051).
 *
 * The route comes from a subrequest to an internal location (the way
 * auth_request waits for another location: a subrequest, a post-subrequest
 * handler, the phase handler called again once it is done), whose answer is
 * in its response headers (X-Corral-Sandbox-Id, X-Corral-Data-Addr,
 * X-Corral-Data-Key, X-Corral-Secure, X-Corral-Public: the subrequest's
 * upstream headers, as auth_request_set reads them; the body is discarded).
 * Answers, 404s included, are cached in a shared-memory
 * zone for a short TTL, so most requests make no subrequest. The tokens are
 * HMACs under the gateway secret and are checked here, in constant time,
 * without a backend call. The contract is docs/data-plane.md.
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
 * An unknown, ended or paused sandbox, a malformed id and a route outside
 * corral_upstream_allow get one answer, 502 {"sandboxId":S,"message":"The
 * sandbox was not found","code":502} (ngx_http_corral_not_found; decisions
 * 32 and 33). A known sandbox with a missing or wrong token gets what E2B
 * answers: 401 for envd's token, 403 for the traffic token (decision 0069).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "data_addr.h"
#include "ngx_http_corral_module.h"


#define NGX_HTTP_CORRAL_ID_LEN      20
#define NGX_HTTP_CORRAL_ENVD_PORT   49983
#define NGX_HTTP_CORRAL_MAC_LEN     32
#define NGX_HTTP_CORRAL_HEX_LEN     64
#define NGX_HTTP_CORRAL_NOT_FOUND_TAIL                                        \
    "\"message\":\"The sandbox was not found\",\"code\":502}"
#define NGX_HTTP_CORRAL_ADDR_MAX    64
#define NGX_HTTP_CORRAL_KEY_MAX     128
#define NGX_HTTP_CORRAL_SECRET_MAX  4096


typedef struct {
    ngx_rbtree_t                  rbtree;
    ngx_rbtree_node_t             sentinel;
    ngx_queue_t                   queue;
} ngx_http_corral_shctx_t;


typedef struct {
    ngx_http_corral_shctx_t      *sh;
    ngx_slab_pool_t              *shpool;
    ngx_msec_t                    ttl;
    ngx_msec_t                    negative_ttl;
} ngx_http_corral_cache_t;


typedef struct {
    ngx_rbtree_node_t             node;
    ngx_queue_t                   queue;
    ngx_msec_t                    expire;
    u_char                        found;
    u_char                        secure;
    u_char                        public;
    u_char                        addr_len;
    u_char                        key_len;
    u_char                        id[NGX_HTTP_CORRAL_ID_LEN];
    u_char                        addr[NGX_HTTP_CORRAL_ADDR_MAX];
    u_char                        key[NGX_HTTP_CORRAL_KEY_MAX];
} ngx_http_corral_node_t;


typedef struct {
    ngx_uint_t                    found;
    ngx_uint_t                    paused;   /* not reachable now, not cached */
    ngx_uint_t                    secure;
    ngx_uint_t                    public;
    ngx_str_t                     addr;
    ngx_str_t                     key;
} ngx_http_corral_route_t;


typedef struct {
    ngx_shm_zone_t               *shm_zone;
} ngx_http_corral_main_conf_t;


typedef struct {
    ngx_flag_t                    enable;
    ngx_flag_t                    cache_bypass;
    ngx_str_t                     lookup;
    ngx_str_t                     secret;
    ngx_str_t                     domain;
    struct data_addr_allow       *upstream_allow;
} ngx_http_corral_loc_conf_t;


static ngx_int_t ngx_http_corral_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_corral_done(ngx_http_request_t *r, void *data,
    ngx_int_t rc);
static ngx_int_t ngx_http_corral_target(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx);
static ngx_int_t ngx_http_corral_lookup(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx);
static ngx_int_t ngx_http_corral_parse_answer(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_admit(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_check_envd(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx);
static ngx_int_t ngx_http_corral_check_traffic(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx);
static ngx_int_t ngx_http_corral_token_equal(ngx_http_request_t *r,
    ngx_str_t *secret, char *kind, ngx_str_t *id, ngx_str_t *given);
static ngx_int_t ngx_http_corral_sign(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_hmac_hex(ngx_str_t *key, ngx_str_t *msg,
    u_char *out);
static ngx_int_t ngx_http_corral_header(ngx_http_request_t *r, char *name,
    ngx_str_t *value);
static ngx_int_t ngx_http_corral_list_header(ngx_list_t *headers, char *name,
    ngx_str_t *value);
static ngx_int_t ngx_http_corral_flag(ngx_list_t *headers, char *name,
    ngx_uint_t *value);
static ngx_int_t ngx_http_corral_raw_path_is(ngx_http_request_t *r,
    char *path);
static ngx_int_t ngx_http_corral_valid_id(ngx_str_t *id);
static ngx_int_t ngx_http_corral_valid_port(ngx_str_t *port);
static ngx_int_t ngx_http_corral_respond(ngx_http_request_t *r,
    ngx_uint_t status, char *message);
static ngx_int_t ngx_http_corral_unauthorized(ngx_http_request_t *r);
static ngx_int_t ngx_http_corral_forbidden(ngx_http_request_t *r);
static ngx_int_t ngx_http_corral_not_found(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx);
static ngx_int_t ngx_http_corral_upstream_allowed(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route);
static ngx_int_t ngx_http_corral_cache_get(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route);
static void ngx_http_corral_cache_put(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route);
static ngx_http_corral_node_t *ngx_http_corral_cache_find(
    ngx_http_corral_cache_t *cache, ngx_str_t *id, uint32_t hash);
static void ngx_http_corral_cache_expire(ngx_http_corral_cache_t *cache,
    ngx_uint_t force);
static void ngx_http_corral_rbtree_insert_value(ngx_rbtree_node_t *temp,
    ngx_rbtree_node_t *node, ngx_rbtree_node_t *sentinel);
static ngx_int_t ngx_http_corral_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_corral_add_variables(ngx_conf_t *cf);
static void *ngx_http_corral_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_corral_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_corral_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static ngx_int_t ngx_http_corral_init(ngx_conf_t *cf);
static ngx_int_t ngx_http_corral_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static ngx_int_t ngx_http_corral_parse_ttl(ngx_conf_t *cf, ngx_str_t *arg,
    size_t prefix, ngx_msec_t *out);
static char *ngx_http_corral_cache(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_corral_secret_file(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_corral_domain(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_corral_upstream_allow(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);


static ngx_command_t  ngx_http_corral_commands[] = {

    { ngx_string("corral_gateway"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_corral_loc_conf_t, enable),
      NULL },

    { ngx_string("corral_lookup"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_corral_loc_conf_t, lookup),
      NULL },

    { ngx_string("corral_secret_file"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_corral_secret_file,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("corral_domain"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_corral_domain,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("corral_upstream_allow"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_corral_upstream_allow,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("corral_cache"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE123,
      ngx_http_corral_cache,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("corral_cache_bypass"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_corral_loc_conf_t, cache_bypass),
      NULL },

    { ngx_string("corral_data_balancer"),
      NGX_HTTP_UPS_CONF|NGX_CONF_NOARGS,
      ngx_http_corral_data_balancer,
      NGX_HTTP_SRV_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_corral_module_ctx = {
    ngx_http_corral_add_variables,         /* preconfiguration */
    ngx_http_corral_init,                  /* postconfiguration */

    ngx_http_corral_create_main_conf,      /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_corral_create_loc_conf,       /* create location configuration */
    ngx_http_corral_merge_loc_conf         /* merge location configuration */
};


ngx_module_t  ngx_http_corral_module = {
    NGX_MODULE_V1,
    &ngx_http_corral_module_ctx,           /* module context */
    ngx_http_corral_commands,              /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


enum {
    NGX_HTTP_CORRAL_VAR_UPSTREAM = 0,
    NGX_HTTP_CORRAL_VAR_ID,
    NGX_HTTP_CORRAL_VAR_PORT,
    NGX_HTTP_CORRAL_VAR_SIGNATURE,
    NGX_HTTP_CORRAL_VAR_LOOKUP_KEY
};


static ngx_http_variable_t  ngx_http_corral_vars[] = {

    { ngx_string("corral_upstream"), NULL, ngx_http_corral_variable,
      NGX_HTTP_CORRAL_VAR_UPSTREAM, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("corral_sandbox_id"), NULL, ngx_http_corral_variable,
      NGX_HTTP_CORRAL_VAR_ID, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("corral_sandbox_port"), NULL, ngx_http_corral_variable,
      NGX_HTTP_CORRAL_VAR_PORT, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("corral_gateway_signature"), NULL, ngx_http_corral_variable,
      NGX_HTTP_CORRAL_VAR_SIGNATURE, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("corral_lookup_key"), NULL, ngx_http_corral_variable,
      NGX_HTTP_CORRAL_VAR_LOOKUP_KEY, NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


static ngx_int_t
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
    ngx_int_t   rc_id, rc_port;
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

    rc_id = ngx_http_corral_header(r, "E2b-Sandbox-Id", &id);
    rc_port = ngx_http_corral_header(r, "E2b-Sandbox-Port", &port);

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
    u_char      *p;
    ngx_str_t    sid;
    ngx_list_t  *answer;

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

    /* the lookup's own answer headers, each exactly once */

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
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "corral route lookup: malformed answer for %V",
                      &ctx->id);
        return NGX_ERROR;
    }

    /* the address goes into proxy_pass: host characters and a port only */

    if (route->addr.len == 0 || route->addr.len > NGX_HTTP_CORRAL_ADDR_MAX) {
        goto invalid;
    }

    for (p = route->addr.data; p < route->addr.data + route->addr.len; p++) {
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z')
              || (*p >= 'A' && *p <= 'Z') || *p == '.' || *p == '-'
              || *p == ':' || *p == '[' || *p == ']'))
        {
            goto invalid;
        }
    }

    if (route->key.len == 0 || route->key.len > NGX_HTTP_CORRAL_KEY_MAX) {
        goto invalid;
    }

    route->found = 1;

    return NGX_OK;

invalid:

    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "corral route lookup: invalid addr or worker_key for %V",
                  &ctx->id);

    return NGX_ERROR;
}


static ngx_int_t
ngx_http_corral_admit(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route)
{
    ngx_int_t  rc;

    if (!route->found
        || ngx_http_corral_upstream_allowed(r, clcf, ctx, route) != NGX_OK)
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

    if (ngx_http_corral_sign(r, ctx, route) != NGX_OK) {
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


static ngx_int_t
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


static ngx_int_t
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


static ngx_int_t
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
 * NGX_OK with the value of the one header called name (of the request, or
 * of a list: the lookup's answer), NGX_DECLINED when it is absent,
 * NGX_ERROR when it was sent more than once.
 */

static ngx_int_t
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
 * phase is told NGX_DONE. message is one of this file's constants, or
 * built from them and a validated sandbox id: nothing in it needs escaping.
 */

static ngx_int_t
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


static ngx_int_t
ngx_http_corral_cache_get(ngx_http_request_t *r, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route)
{
    uint32_t                      hash;
    ngx_int_t                     rc;
    ngx_http_corral_node_t       *cn;
    ngx_http_corral_cache_t      *cache;
    ngx_http_corral_main_conf_t  *cmcf;

    cmcf = ngx_http_get_module_main_conf(r, ngx_http_corral_module);

    if (cmcf->shm_zone == NULL) {
        return NGX_DECLINED;
    }

    cache = cmcf->shm_zone->data;
    hash = ngx_crc32_short(ctx->id.data, ctx->id.len);

    ngx_shmtx_lock(&cache->shpool->mutex);

    cn = ngx_http_corral_cache_find(cache, &ctx->id, hash);

    if (cn == NULL || (ngx_msec_int_t) (cn->expire - ngx_current_msec) <= 0) {
        rc = NGX_DECLINED;
        goto done;
    }

    /* copy out: the node may be reused as soon as the lock is released */

    ngx_memzero(route, sizeof(ngx_http_corral_route_t));

    route->found = cn->found;
    route->secure = cn->secure;
    route->public = cn->public;

    if (cn->found) {
        route->addr.data = ngx_pnalloc(r->pool, cn->addr_len + cn->key_len);
        if (route->addr.data == NULL) {
            rc = NGX_ERROR;
            goto done;
        }

        route->addr.len = cn->addr_len;
        ngx_memcpy(route->addr.data, cn->addr, cn->addr_len);

        route->key.data = route->addr.data + cn->addr_len;
        route->key.len = cn->key_len;
        ngx_memcpy(route->key.data, cn->key, cn->key_len);
    }

    ngx_queue_remove(&cn->queue);
    ngx_queue_insert_head(&cache->sh->queue, &cn->queue);

    rc = NGX_OK;

done:

    ngx_shmtx_unlock(&cache->shpool->mutex);

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "corral cache %V: %s", &ctx->id,
                   rc == NGX_OK ? "hit" : "miss");

    return rc;
}


static void
ngx_http_corral_cache_put(ngx_http_request_t *r, ngx_http_corral_ctx_t *ctx,
    ngx_http_corral_route_t *route)
{
    uint32_t                      hash;
    ngx_msec_t                    ttl;
    ngx_http_corral_node_t       *cn;
    ngx_http_corral_cache_t      *cache;
    ngx_http_corral_main_conf_t  *cmcf;

    cmcf = ngx_http_get_module_main_conf(r, ngx_http_corral_module);

    if (cmcf->shm_zone == NULL) {
        return;
    }

    if (route->paused) {
        return;
    }

    cache = cmcf->shm_zone->data;
    ttl = route->found ? cache->ttl : cache->negative_ttl;

    if (ttl == 0) {
        return;
    }

    hash = ngx_crc32_short(ctx->id.data, ctx->id.len);

    ngx_shmtx_lock(&cache->shpool->mutex);

    ngx_http_corral_cache_expire(cache, 0);

    cn = ngx_http_corral_cache_find(cache, &ctx->id, hash);

    if (cn == NULL) {
        cn = ngx_slab_alloc_locked(cache->shpool,
                                   sizeof(ngx_http_corral_node_t));

        if (cn == NULL) {
            ngx_http_corral_cache_expire(cache, 1);

            cn = ngx_slab_alloc_locked(cache->shpool,
                                       sizeof(ngx_http_corral_node_t));
            if (cn == NULL) {
                ngx_shmtx_unlock(&cache->shpool->mutex);

                ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                              "corral: cache zone \"%V\" is full",
                              &cmcf->shm_zone->shm.name);
                return;
            }
        }

        cn->node.key = hash;
        ngx_memcpy(cn->id, ctx->id.data, NGX_HTTP_CORRAL_ID_LEN);

        ngx_rbtree_insert(&cache->sh->rbtree, &cn->node);

    } else {
        ngx_queue_remove(&cn->queue);
    }

    ngx_queue_insert_head(&cache->sh->queue, &cn->queue);

    cn->expire = ngx_current_msec + ttl;
    cn->found = route->found ? 1 : 0;
    cn->secure = route->secure ? 1 : 0;
    cn->public = route->public ? 1 : 0;
    cn->addr_len = (u_char) route->addr.len;
    cn->key_len = (u_char) route->key.len;

    if (route->found) {
        ngx_memcpy(cn->addr, route->addr.data, route->addr.len);
        ngx_memcpy(cn->key, route->key.data, route->key.len);
    }

    ngx_shmtx_unlock(&cache->shpool->mutex);
}


static ngx_http_corral_node_t *
ngx_http_corral_cache_find(ngx_http_corral_cache_t *cache, ngx_str_t *id,
    uint32_t hash)
{
    ngx_int_t                rc;
    ngx_rbtree_node_t       *node, *sentinel;
    ngx_http_corral_node_t  *cn;

    node = cache->sh->rbtree.root;
    sentinel = cache->sh->rbtree.sentinel;

    while (node != sentinel) {

        if (hash < node->key) {
            node = node->left;
            continue;
        }

        if (hash > node->key) {
            node = node->right;
            continue;
        }

        /* hash == node->key */

        cn = (ngx_http_corral_node_t *) node;

        rc = ngx_memcmp(id->data, cn->id, NGX_HTTP_CORRAL_ID_LEN);

        if (rc == 0) {
            return cn;
        }

        node = (rc < 0) ? node->left : node->right;
    }

    return NULL;
}


/*
 * Frees expired entries from the cold end of the LRU queue (a few at a
 * time, so that no request pays for a large sweep); with force, frees the
 * coldest entry even if it has not expired, to make room.
 */

static void
ngx_http_corral_cache_expire(ngx_http_corral_cache_t *cache, ngx_uint_t force)
{
    ngx_uint_t               n;
    ngx_queue_t             *q;
    ngx_http_corral_node_t  *cn;

    for (n = 0; n < 3; n++) {

        if (ngx_queue_empty(&cache->sh->queue)) {
            return;
        }

        q = ngx_queue_last(&cache->sh->queue);
        cn = ngx_queue_data(q, ngx_http_corral_node_t, queue);

        if (!force && (ngx_msec_int_t) (cn->expire - ngx_current_msec) > 0) {
            return;
        }

        force = 0;

        ngx_queue_remove(q);
        ngx_rbtree_delete(&cache->sh->rbtree, &cn->node);
        ngx_slab_free_locked(cache->shpool, cn);
    }
}


static void
ngx_http_corral_rbtree_insert_value(ngx_rbtree_node_t *temp,
    ngx_rbtree_node_t *node, ngx_rbtree_node_t *sentinel)
{
    ngx_rbtree_node_t       **p;
    ngx_http_corral_node_t   *cn, *cnt;

    for ( ;; ) {

        if (node->key < temp->key) {
            p = &temp->left;

        } else if (node->key > temp->key) {
            p = &temp->right;

        } else { /* node->key == temp->key */

            cn = (ngx_http_corral_node_t *) node;
            cnt = (ngx_http_corral_node_t *) temp;

            p = (ngx_memcmp(cn->id, cnt->id, NGX_HTTP_CORRAL_ID_LEN) < 0)
                ? &temp->left : &temp->right;
        }

        if (*p == sentinel) {
            break;
        }

        temp = *p;
    }

    *p = node;
    node->parent = temp;
    node->left = sentinel;
    node->right = sentinel;
    ngx_rbt_red(node);
}


static ngx_int_t
ngx_http_corral_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_str_t              *s;
    ngx_http_corral_ctx_t  *ctx;

    /* the lookup location reads these too: the state is the main request's */

    ctx = ngx_http_get_module_ctx(r->main, ngx_http_corral_module);

    if (ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    switch (data) {

    case NGX_HTTP_CORRAL_VAR_UPSTREAM:
        s = &ctx->upstream;
        break;

    case NGX_HTTP_CORRAL_VAR_ID:
        s = &ctx->id;
        break;

    case NGX_HTTP_CORRAL_VAR_PORT:
        s = &ctx->port;
        break;

    case NGX_HTTP_CORRAL_VAR_SIGNATURE:
        s = &ctx->signature;
        break;

    default: /* NGX_HTTP_CORRAL_VAR_LOOKUP_KEY */

        /* the gateway secret, only inside this module's own lookup */

        if (ctx->subrequest != r) {
            v->not_found = 1;
            return NGX_OK;
        }

        s = &ctx->secret;
        break;
    }

    if (s->len == 0) {
        v->not_found = 1;
        return NGX_OK;
    }

    v->len = s->len;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;
    v->data = s->data;

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_add_variables(ngx_conf_t *cf)
{
    ngx_http_variable_t  *var, *v;

    for (v = ngx_http_corral_vars; v->name.len; v++) {
        var = ngx_http_add_variable(cf, &v->name, v->flags);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = v->get_handler;
        var->data = v->data;
    }

    return NGX_OK;
}


static void *
ngx_http_corral_create_main_conf(ngx_conf_t *cf)
{
    ngx_http_corral_main_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_corral_main_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     conf->shm_zone = NULL;
     */

    return conf;
}


static void *
ngx_http_corral_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_corral_loc_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_corral_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     conf->lookup = { 0, NULL };
     *     conf->secret = { 0, NULL };
     *     conf->domain = { 0, NULL };
     */

    conf->enable = NGX_CONF_UNSET;
    conf->cache_bypass = NGX_CONF_UNSET;
    conf->upstream_allow = NGX_CONF_UNSET_PTR;

    return conf;
}


static char *
ngx_http_corral_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_corral_loc_conf_t *prev = parent;
    ngx_http_corral_loc_conf_t *conf = child;

    ngx_conf_merge_value(conf->enable, prev->enable, 0);
    ngx_conf_merge_value(conf->cache_bypass, prev->cache_bypass, 0);
    ngx_conf_merge_str_value(conf->lookup, prev->lookup, "");
    ngx_conf_merge_str_value(conf->secret, prev->secret, "");
    ngx_conf_merge_str_value(conf->domain, prev->domain, "");
    ngx_conf_merge_ptr_value(conf->upstream_allow, prev->upstream_allow, NULL);

    if (!conf->enable) {
        return NGX_CONF_OK;
    }

    if (conf->lookup.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"corral_gateway on\" needs \"corral_lookup\"");
        return NGX_CONF_ERROR;
    }

    if (conf->secret.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"corral_gateway on\" needs "
                           "\"corral_secret_file\"");
        return NGX_CONF_ERROR;
    }

    if (conf->upstream_allow == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"corral_gateway on\" needs "
                           "\"corral_upstream_allow\": the addresses or "
                           "networks of the workers' data ports");
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_corral_init(ngx_conf_t *cf)
{
    ngx_http_handler_pt        *h;
    ngx_http_core_main_conf_t  *cmcf;

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    /*
     * Preaccess, not access: limit_conn (a preaccess handler) must see
     * $corral_sandbox_id of an admitted request, or a limit per sandbox
     * would count nothing (an empty key is not counted) or, keyed on the
     * id as the client wrote it, let anyone use up another's sandbox's
     * budget (decision 0068). A dynamic module's handler is pushed after
     * the built-in ones and nginx runs a phase's handlers last-pushed
     * first, so this runs before limit_conn and limit_req, and still before
     * the access phase (allow/deny, auth_request), as it did there.
     */

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_PREACCESS_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_corral_handler;

    return ngx_http_corral_keep_init(cf);
}


static ngx_int_t
ngx_http_corral_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    ngx_http_corral_cache_t  *ocache = data;

    size_t                    len;
    ngx_http_corral_cache_t  *cache;

    cache = shm_zone->data;

    if (ocache) {
        cache->sh = ocache->sh;
        cache->shpool = ocache->shpool;

        return NGX_OK;
    }

    cache->shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (shm_zone->shm.exists) {
        cache->sh = cache->shpool->data;

        return NGX_OK;
    }

    cache->sh = ngx_slab_alloc(cache->shpool, sizeof(ngx_http_corral_shctx_t));
    if (cache->sh == NULL) {
        return NGX_ERROR;
    }

    cache->shpool->data = cache->sh;

    ngx_rbtree_init(&cache->sh->rbtree, &cache->sh->sentinel,
                    ngx_http_corral_rbtree_insert_value);

    ngx_queue_init(&cache->sh->queue);

    len = sizeof(" in corral_cache zone \"\"") + shm_zone->shm.name.len;

    cache->shpool->log_ctx = ngx_slab_alloc(cache->shpool, len);
    if (cache->shpool->log_ctx == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(cache->shpool->log_ctx, " in corral_cache zone \"%V\"%Z",
                &shm_zone->shm.name);

    cache->shpool->log_nomem = 0;

    return NGX_OK;
}


/* corral_cache zone=NAME:SIZE [ttl=TIME] [negative_ttl=TIME]; */

/* "ttl=2s" and "negative_ttl=1s": the time after the prefix. */
static ngx_int_t
ngx_http_corral_parse_ttl(ngx_conf_t *cf, ngx_str_t *arg, size_t prefix,
    ngx_msec_t *out)
{
    ngx_str_t  s;

    s.data = arg->data + prefix;
    s.len = arg->len - prefix;

    *out = ngx_parse_time(&s, 0);
    if (*out == (ngx_msec_t) NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "invalid \"%V\"", arg);
        return NGX_ERROR;
    }

    return NGX_OK;
}


static char *
ngx_http_corral_cache(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_corral_main_conf_t *cmcf = conf;

    u_char                   *p;
    ssize_t                   size;
    ngx_str_t                *value, name, s;
    ngx_uint_t                i;
    ngx_msec_t                ttl, negative_ttl;
    ngx_http_corral_cache_t  *cache;

    if (cmcf->shm_zone) {
        return "is duplicate";
    }

    value = cf->args->elts;

    name.len = 0;
    size = 0;
    ttl = 2000;
    negative_ttl = 1000;

    for (i = 1; i < cf->args->nelts; i++) {

        if (ngx_strncmp(value[i].data, "zone=", 5) == 0) {

            name.data = value[i].data + 5;

            p = (u_char *) ngx_strchr(name.data, ':');

            if (p == NULL) {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                                   "invalid zone size \"%V\"", &value[i]);
                return NGX_CONF_ERROR;
            }

            name.len = p - name.data;

            s.data = p + 1;
            s.len = value[i].data + value[i].len - s.data;

            size = ngx_parse_size(&s);

            if (size == NGX_ERROR) {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                                   "invalid zone size \"%V\"", &value[i]);
                return NGX_CONF_ERROR;
            }

            if (size < (ssize_t) (8 * ngx_pagesize)) {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                                   "zone \"%V\" is too small", &value[i]);
                return NGX_CONF_ERROR;
            }

            continue;
        }

        if (ngx_strncmp(value[i].data, "ttl=", 4) == 0) {
            if (ngx_http_corral_parse_ttl(cf, &value[i], 4, &ttl) != NGX_OK) {
                return NGX_CONF_ERROR;
            }
            continue;
        }

        if (ngx_strncmp(value[i].data, "negative_ttl=", 13) == 0) {
            if (ngx_http_corral_parse_ttl(cf, &value[i], 13, &negative_ttl)
                != NGX_OK)
            {
                return NGX_CONF_ERROR;
            }
            continue;
        }

        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid parameter \"%V\"", &value[i]);
        return NGX_CONF_ERROR;
    }

    if (name.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"%V\" must have \"zone\" parameter",
                           &cmd->name);
        return NGX_CONF_ERROR;
    }

    cache = ngx_pcalloc(cf->pool, sizeof(ngx_http_corral_cache_t));
    if (cache == NULL) {
        return NGX_CONF_ERROR;
    }

    cache->ttl = ttl;
    cache->negative_ttl = negative_ttl;

    cmcf->shm_zone = ngx_shared_memory_add(cf, &name, size,
                                           &ngx_http_corral_module);
    if (cmcf->shm_zone == NULL) {
        return NGX_CONF_ERROR;
    }

    if (cmcf->shm_zone->data) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "zone \"%V\" is already used", &name);
        return NGX_CONF_ERROR;
    }

    cmcf->shm_zone->init = ngx_http_corral_init_zone;
    cmcf->shm_zone->data = cache;

    return NGX_CONF_OK;
}


/*
 * corral_secret_file PATH; reads the gateway secret once, when the
 * configuration is loaded (by the master, before it drops privileges), and
 * refuses a file that group or others can read, or a short secret.
 */

static char *
ngx_http_corral_secret_file(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_corral_loc_conf_t *clcf = conf;

    u_char           *buf;
    size_t            len;
    ssize_t           n;
    ngx_fd_t          fd;
    ngx_str_t        *value, path;
    ngx_file_info_t   fi;

    if (clcf->secret.data != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;
    path = value[1];

    if (ngx_conf_full_name(cf->cycle, &path, 1) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    fd = ngx_open_file(path.data, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);
    if (fd == NGX_INVALID_FILE) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           ngx_open_file_n " \"%s\" failed", path.data);
        return NGX_CONF_ERROR;
    }

    if (ngx_fd_info(fd, &fi) == NGX_FILE_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           ngx_fd_info_n " \"%s\" failed", path.data);
        goto failed;
    }

    if (ngx_file_access(&fi) & 077) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"%s\" is readable by group or others; "
                           "chmod 600 it", path.data);
        goto failed;
    }

    buf = ngx_pnalloc(cf->pool, NGX_HTTP_CORRAL_SECRET_MAX);
    if (buf == NULL) {
        goto failed;
    }

    n = ngx_read_fd(fd, buf, NGX_HTTP_CORRAL_SECRET_MAX);
    if (n == -1) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           ngx_read_fd_n " \"%s\" failed", path.data);
        goto failed;
    }

    if (ngx_close_file(fd) == NGX_FILE_ERROR) {
        ngx_conf_log_error(NGX_LOG_ALERT, cf, ngx_errno,
                           ngx_close_file_n " \"%s\" failed", path.data);
    }

    len = (size_t) n;

    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'
                       || buf[len - 1] == ' '))
    {
        len--;
    }

    if (len < 32 || len == NGX_HTTP_CORRAL_SECRET_MAX) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "the secret in \"%s\" must be 32 to %d characters",
                           path.data, NGX_HTTP_CORRAL_SECRET_MAX - 1);
        return NGX_CONF_ERROR;
    }

    clcf->secret.data = buf;
    clcf->secret.len = len;

    return NGX_CONF_OK;

failed:

    if (ngx_close_file(fd) == NGX_FILE_ERROR) {
        ngx_conf_log_error(NGX_LOG_ALERT, cf, ngx_errno,
                           ngx_close_file_n " \"%s\" failed", path.data);
    }

    return NGX_CONF_ERROR;
}


/*
 * corral_domain DOMAIN; the suffix of "<port>-<id>.<domain>" hosts,
 * lowercased, with a ":port" (as E2B_DOMAIN may carry) dropped: nginx
 * matches the host without its port.
 */

static char *
ngx_http_corral_domain(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_corral_loc_conf_t *clcf = conf;

    u_char     *p;
    ngx_str_t  *value;

    if (clcf->domain.data != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;

    p = ngx_strlchr(value[1].data, value[1].data + value[1].len, ':');

    clcf->domain.len = p ? (size_t) (p - value[1].data) : value[1].len;

    if (clcf->domain.len == 0) {
        return "is empty";
    }

    clcf->domain.data = ngx_pnalloc(cf->pool, clcf->domain.len);
    if (clcf->domain.data == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_strlow(clcf->domain.data, value[1].data, clcf->domain.len);

    return NGX_CONF_OK;
}


/*
 * corral_upstream_allow ENTRY... [ports=RANGE[,RANGE...]]; where workers' data
 * ports may be: each ENTRY an exact address ("127.0.0.1:7001", "[::1]:7001":
 * corral.conf's worker_data_addrs) or a network ("10.0.0.0/24":
 * worker_data_networks, with ports= its worker_data_ports; default 7001).
 * conf/stack.sh renders both from the same settings, read by the same code
 * (common/data_addr.c). A network overlapping loopback is refused: there the
 * gateway host's own services listen, so loopback is allowed only as exact
 * addresses (decision 61); so is one overlapping link-local, metadata,
 * multicast and the like.
 */

static char *
ngx_http_corral_upstream_allow(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_corral_loc_conf_t *clcf = conf;

    u_char                  *nets, *p, *ports;
    char                     err[192];
    size_t                   len;
    ngx_str_t               *value;
    ngx_uint_t               i;
    struct data_addr_allow  *allow;

    if (clcf->upstream_allow != NGX_CONF_UNSET_PTR) {
        return "is duplicate";
    }

    value = cf->args->elts;

    len = 1;
    for (i = 1; i < cf->args->nelts; i++) {
        len += value[i].len + 1;
    }

    allow = ngx_palloc(cf->pool, sizeof(struct data_addr_allow));
    nets = ngx_pnalloc(cf->pool, len);
    if (allow == NULL || nets == NULL) {
        return NGX_CONF_ERROR;
    }

    data_addr_defaults(allow);

    p = nets;
    ports = NULL;

    for (i = 1; i < cf->args->nelts; i++) {

        /* the words of a directive are NUL-terminated */

        if (ngx_strncmp(value[i].data, "ports=", 6) == 0) {
            ports = value[i].data + 6;
            continue;
        }

        p = ngx_cpymem(p, value[i].data, value[i].len);
        *p++ = ' ';
    }

    *p = '\0';

    if (data_addr_entries(allow, (char *) nets, err, sizeof(err)) != 0
        || (ports != NULL
            && data_addr_ports(allow, (char *) ports, err, sizeof(err)) != 0))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\": %s",
                           &cmd->name, err);
        return NGX_CONF_ERROR;
    }

    clcf->upstream_allow = allow;

    return NGX_CONF_OK;
}
