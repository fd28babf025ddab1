
/*
 * corral_data_balancer: an upstream{} whose one peer is, per request, the
 * worker data port the request's route resolved to.
 *
 *     upstream corral_data {
 *         corral_data_balancer;
 *         keepalive 256;
 *     }
 *     ... proxy_pass http://corral_data;
 *
 * proxy_pass with a variable makes nginx build an implicit upstream per
 * request, which never keeps a connection: every request paid a new TCP
 * connection to the data port. A named upstream can carry nginx's own
 * `keepalive`, which wraps this balancer and keeps idle connections keyed
 * by the sockaddr this balancer returns, so a kept connection is only ever
 * reused towards the same data port (the data port checks each request's
 * gateway signature: a connection carries no sandbox of its own).
 *
 * The address is the access handler's (ctx->upstream), already checked
 * against corral_upstream_allow there; a request the handler did not admit
 * has none and is refused here, before any connection.
 */


#include "ngx_http_corral_module.h"


static ngx_int_t ngx_http_corral_balancer_init(ngx_conf_t *cf,
    ngx_http_upstream_srv_conf_t *us);
static ngx_int_t ngx_http_corral_balancer_init_peer(ngx_http_request_t *r,
    ngx_http_upstream_srv_conf_t *us);
static ngx_int_t ngx_http_corral_balancer_parse(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx);
static ngx_int_t ngx_http_corral_balancer_get(ngx_peer_connection_t *pc,
    void *data);
static void ngx_http_corral_balancer_free(ngx_peer_connection_t *pc,
    void *data, ngx_uint_t state);
#if (NGX_HTTP_SSL)
static ngx_int_t ngx_http_corral_balancer_set_session(
    ngx_peer_connection_t *pc, void *data);
static void ngx_http_corral_balancer_save_session(ngx_peer_connection_t *pc,
    void *data);
#endif


char *
ngx_http_corral_data_balancer(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_upstream_server_t    *us;
    ngx_http_upstream_srv_conf_t  *uscf;

    uscf = ngx_http_conf_get_module_srv_conf(cf, ngx_http_upstream_module);

    /*
     * keepalive wraps whatever balancer is set when it is read: set after
     * it, this one would silently drop it
     */

    if (uscf->peer.init_upstream) {
        return "must be the upstream's only balancer and come before "
               "\"keepalive\"";
    }

    /*
     * nginx refuses an upstream{} without a server: one entry without
     * addresses stands for them, never connected (the peer is the route's)
     */

    us = ngx_array_push(uscf->servers);
    if (us == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(us, sizeof(ngx_http_upstream_server_t));
    us->down = 1;

    /* how ngx_http_corral_balanced knows this upstream (no address) */

    ngx_str_set(&us->name, "corral_data_balancer");

    uscf->peer.init_upstream = ngx_http_corral_balancer_init;

    return NGX_CONF_OK;
}


/* 1 when corral_data_balancer serves uscf (its stand-in is the one server) */

ngx_uint_t
ngx_http_corral_balanced(ngx_http_upstream_srv_conf_t *uscf)
{
    ngx_http_upstream_server_t  *us;

    if (uscf->servers == NULL || uscf->servers->nelts != 1) {
        return 0;
    }

    us = uscf->servers->elts;

    return us->naddrs == 0 && us->name.len == sizeof("corral_data_balancer") - 1
           && ngx_strncmp(us->name.data, "corral_data_balancer",
                          us->name.len) == 0;
}


static ngx_int_t
ngx_http_corral_balancer_init(ngx_conf_t *cf, ngx_http_upstream_srv_conf_t *us)
{
    /* the directive's own stand-in is the one entry */

    if (us->servers->nelts != 1) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "upstream \"%V\": corral_data_balancer takes "
                           "its peer from each request's route, not from "
                           "\"server\" lines", &us->host);
        return NGX_ERROR;
    }

    us->peer.init = ngx_http_corral_balancer_init_peer;

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_balancer_init_peer(ngx_http_request_t *r,
    ngx_http_upstream_srv_conf_t *us)
{
    ngx_http_corral_ctx_t  *ctx;

    /* the main request's, as the variables that sign it */

    ctx = ngx_http_get_module_ctx(r->main, ngx_http_corral_module);

    if (ctx == NULL || ctx->upstream.len == 0) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "upstream \"%V\": no admitted sandbox route for this "
                      "request (\"corral_gateway on\" must be set where "
                      "it is proxied)", &us->host);
        return NGX_ERROR;
    }

    if (ctx->peer == NULL && ngx_http_corral_balancer_parse(r, ctx) != NGX_OK)
    {
        return NGX_ERROR;
    }

    r->upstream->peer.data = ctx;
    r->upstream->peer.get = ngx_http_corral_balancer_get;
    r->upstream->peer.free = ngx_http_corral_balancer_free;
    r->upstream->peer.tries = 1;

#if (NGX_HTTP_SSL)
    r->upstream->peer.set_session = ngx_http_corral_balancer_set_session;
    r->upstream->peer.save_session = ngx_http_corral_balancer_save_session;
#endif

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_balancer_parse(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx)
{
    ngx_addr_t  *peer;

    peer = ngx_pcalloc(r->pool, sizeof(ngx_addr_t));
    if (peer == NULL) {
        return NGX_ERROR;
    }

    /* "IP:port" or "[v6]:port" (data_addr_check let nothing else through) */

    if (ngx_parse_addr_port(r->pool, peer, ctx->upstream.data,
                            ctx->upstream.len)
        != NGX_OK
        || ngx_inet_get_port(peer->sockaddr) == 0)
    {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "corral_data_balancer: route \"%V\" of sandbox %V is "
                      "not an IP literal and port", &ctx->upstream, &ctx->id);
        return NGX_ERROR;
    }

    peer->name = ctx->upstream;
    ctx->peer = peer;

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_balancer_get(ngx_peer_connection_t *pc, void *data)
{
    ngx_http_corral_ctx_t  *ctx = data;

    /* a new connection, unless keepalive (which wraps this) has one */

    pc->cached = 0;
    pc->connection = NULL;

    pc->sockaddr = ctx->peer->sockaddr;
    pc->socklen = ctx->peer->socklen;
    pc->name = &ctx->peer->name;

    return NGX_OK;
}


/*
 * One try, and never another address: a failed connection ends the request
 * (502, the gateway's "worker unreachable"). The one exception is nginx's
 * own: a kept connection that failed with an error gives its try back
 * (ngx_http_upstream_next), so an idempotent request goes again to the same
 * data port, on another kept connection or a new one.
 */

static void
ngx_http_corral_balancer_free(ngx_peer_connection_t *pc, void *data,
    ngx_uint_t state)
{
    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, pc->log, 0,
                   "corral_data_balancer free: state %ui, tries %ui",
                   state, pc->tries);

    if (pc->tries) {
        pc->tries--;
    }
}


#if (NGX_HTTP_SSL)

/* the data port speaks plain HTTP; these keep "https://" from crashing */

static ngx_int_t
ngx_http_corral_balancer_set_session(ngx_peer_connection_t *pc, void *data)
{
    return NGX_OK;
}


static void
ngx_http_corral_balancer_save_session(ngx_peer_connection_t *pc, void *data)
{
}

#endif
