
/*
 * Whether a connection to a data port may be kept after its answer.
 *
 * After the head of a request, a data port may only copy bytes (workerd's
 * did: it relays the sandbox's answer as sent). Such a connection, kept,
 * would carry nginx's next request, for any sandbox of that worker, tokens
 * and signature included, to the first sandbox's container; and the
 * sandbox, not the data port, chose whether its answer said
 * "Connection: close". So a connection is kept only when the data port
 * itself vouches for it: it answers with X-Corral-Keep set to the request's
 * X-Corral-Gateway value, which it stripped before the sandbox could see
 * it, so that no sandbox can forge it (docs/data-plane.md, decision 0051).
 * Otherwise the answer is treated as if it said "Connection: close".
 * X-Corral-Keep never reaches the client.
 *
 * And a kept connection is reused only when clean (decision 0066): a byte
 * waiting on it before the next request is sent would be read as that
 * request's answer, another client's. nginx's keepalive closes an idle
 * connection on which bytes arrive, but only when it sees their event, which
 * may come after the request that reuses it (both in one batch). So every
 * upstream that corral_data_balancer serves is wrapped, outermost, around
 * whatever wraps the balancer (keepalive): a connection keepalive hands out
 * is asked first, without reading, and if anything waits on it (a byte, its
 * end, an error) it is closed and a new one is opened to the same data port.
 */


#include <openssl/crypto.h>

#include "ngx_http_corral_module.h"


typedef struct {
    ngx_http_upstream_init_peer_pt   init;
} ngx_http_corral_clean_conf_t;


/* what the wrapped get, free and session handlers were given */

typedef struct {
    void                            *data;
    ngx_event_get_peer_pt            get;
    ngx_event_free_peer_pt           free;
#if (NGX_HTTP_SSL)
    ngx_event_set_peer_session_pt    set_session;
    ngx_event_save_peer_session_pt   save_session;
#endif
} ngx_http_corral_clean_peer_t;


static ngx_http_output_header_filter_pt  ngx_http_next_header_filter;


static ngx_int_t ngx_http_corral_keep_filter(ngx_http_request_t *r);
static ngx_int_t ngx_http_corral_keep_vouched(ngx_list_t *headers,
    ngx_str_t *signature);
static void ngx_http_corral_keep_hide(ngx_list_t *headers);
static ngx_int_t ngx_http_corral_clean_wrap(ngx_conf_t *cf);
static ngx_int_t ngx_http_corral_clean_init_peer(ngx_http_request_t *r,
    ngx_http_upstream_srv_conf_t *us);
static ngx_int_t ngx_http_corral_clean_get(ngx_peer_connection_t *pc,
    void *data);
static ngx_int_t ngx_http_corral_clean(ngx_connection_t *c);
static void ngx_http_corral_clean_free(ngx_peer_connection_t *pc,
    void *data, ngx_uint_t state);
#if (NGX_HTTP_SSL)
static ngx_int_t ngx_http_corral_clean_set_session(ngx_peer_connection_t *pc,
    void *data);
static void ngx_http_corral_clean_save_session(ngx_peer_connection_t *pc,
    void *data);
#endif


static ngx_str_t  ngx_http_corral_keep_header = ngx_string("X-Corral-Keep");


ngx_int_t
ngx_http_corral_keep_init(ngx_conf_t *cf)
{
    ngx_http_next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = ngx_http_corral_keep_filter;

    return ngx_http_corral_clean_wrap(cf);
}


/*
 * Called at postconfiguration, after every upstream's init_upstream ran
 * (keepalive's included): us->peer.init is then the outermost one.
 */

static ngx_int_t
ngx_http_corral_clean_wrap(ngx_conf_t *cf)
{
    ngx_uint_t                        i;
    ngx_http_upstream_srv_conf_t    **uscfp;
    ngx_http_upstream_main_conf_t    *umcf;
    ngx_http_corral_clean_conf_t     *ccf;

    umcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_upstream_module);

    if (umcf == NULL) {
        return NGX_OK;
    }

    uscfp = umcf->upstreams.elts;

    for (i = 0; i < umcf->upstreams.nelts; i++) {

        if (!ngx_http_corral_balanced(uscfp[i])) {
            continue;
        }

        ccf = ngx_palloc(cf->pool, sizeof(ngx_http_corral_clean_conf_t));
        if (ccf == NULL) {
            return NGX_ERROR;
        }

        ccf->init = uscfp[i]->peer.init;

        /* peer.data is free: the balancer keeps its peer per request */

        uscfp[i]->peer.data = ccf;
        uscfp[i]->peer.init = ngx_http_corral_clean_init_peer;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_clean_init_peer(ngx_http_request_t *r,
    ngx_http_upstream_srv_conf_t *us)
{
    ngx_peer_connection_t         *pc;
    ngx_http_corral_clean_conf_t  *ccf = us->peer.data;
    ngx_http_corral_clean_peer_t  *cp;

    if (ccf->init(r, us) != NGX_OK) {
        return NGX_ERROR;
    }

    cp = ngx_palloc(r->pool, sizeof(ngx_http_corral_clean_peer_t));
    if (cp == NULL) {
        return NGX_ERROR;
    }

    pc = &r->upstream->peer;

    cp->data = pc->data;
    cp->get = pc->get;
    cp->free = pc->free;

    pc->data = cp;
    pc->get = ngx_http_corral_clean_get;
    pc->free = ngx_http_corral_clean_free;

#if (NGX_HTTP_SSL)
    cp->set_session = pc->set_session;
    cp->save_session = pc->save_session;
    pc->set_session = ngx_http_corral_clean_set_session;
    pc->save_session = ngx_http_corral_clean_save_session;
#endif

    return NGX_OK;
}


static ngx_int_t
ngx_http_corral_clean_get(ngx_peer_connection_t *pc, void *data)
{
    ngx_int_t                      rc;
    ngx_connection_t              *c;
    ngx_http_corral_clean_peer_t  *cp = data;

    rc = cp->get(pc, cp->data);

    /* NGX_DONE: a kept connection, pc->sockaddr already the route's */

    if (rc != NGX_DONE || ngx_http_corral_clean(pc->connection) == NGX_OK) {
        return rc;
    }

    c = pc->connection;

    ngx_log_error(NGX_LOG_WARN, pc->log, 0,
                  "data port %V: bytes or a close on an idle kept "
                  "connection; closed, a new one is opened", pc->name);

    if (c->pool) {
        ngx_destroy_pool(c->pool);
    }

    ngx_close_connection(c);

    pc->connection = NULL;
    pc->cached = 0;

    return NGX_OK;
}


/* NGX_OK when nothing waits to be read on c: no byte, no end, no error */

static ngx_int_t
ngx_http_corral_clean(ngx_connection_t *c)
{
    u_char     buf;
    ssize_t    n;
    ngx_err_t  err;

    n = recv(c->fd, &buf, 1, MSG_PEEK);
    err = ngx_socket_errno;

    if (n == -1 && err == NGX_EAGAIN) {
        return NGX_OK;
    }

    return NGX_DECLINED;
}


static void
ngx_http_corral_clean_free(ngx_peer_connection_t *pc, void *data,
    ngx_uint_t state)
{
    ngx_http_corral_clean_peer_t  *cp = data;

    cp->free(pc, cp->data, state);
}


#if (NGX_HTTP_SSL)

static ngx_int_t
ngx_http_corral_clean_set_session(ngx_peer_connection_t *pc, void *data)
{
    ngx_http_corral_clean_peer_t  *cp = data;

    return cp->set_session ? cp->set_session(pc, cp->data) : NGX_OK;
}


static void
ngx_http_corral_clean_save_session(ngx_peer_connection_t *pc, void *data)
{
    ngx_http_corral_clean_peer_t  *cp = data;

    if (cp->save_session) {
        cp->save_session(pc, cp->data);
    }
}

#endif


static ngx_int_t
ngx_http_corral_keep_filter(ngx_http_request_t *r)
{
    ngx_http_upstream_t    *u;
    ngx_http_corral_ctx_t  *ctx;

    u = r->upstream;
    ctx = ngx_http_get_module_ctx(r->main, ngx_http_corral_module);

    /* only answers from a data port that corral_data_balancer chose */

    if (u == NULL || ctx == NULL || ctx->peer == NULL
        || u->peer.name != &ctx->peer->name)
    {
        return ngx_http_next_header_filter(r);
    }

    if (ngx_http_corral_keep_vouched(&u->headers_in.headers, &ctx->signature)
        != NGX_OK)
    {
        /* read by the proxy module when the answer ends */
        u->headers_in.connection_close = 1;
        u->keepalive = 0;
    }

    ngx_http_corral_keep_hide(&r->headers_out.headers);

    return ngx_http_next_header_filter(r);
}


/* NGX_OK when the one X-Corral-Keep is exactly the request's signature */

static ngx_int_t
ngx_http_corral_keep_vouched(ngx_list_t *headers, ngx_str_t *signature)
{
    ngx_uint_t        i, found;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    found = 0;

    for (part = &headers->part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            if (h[i].key.len != ngx_http_corral_keep_header.len
                || ngx_strncasecmp(h[i].key.data,
                                   ngx_http_corral_keep_header.data,
                                   h[i].key.len)
                   != 0)
            {
                continue;
            }

            if (found++ || signature->len == 0
                || h[i].value.len != signature->len
                || CRYPTO_memcmp(h[i].value.data, signature->data,
                                 signature->len)
                   != 0)
            {
                return NGX_DECLINED;
            }
        }
    }

    return found ? NGX_OK : NGX_DECLINED;
}


static void
ngx_http_corral_keep_hide(ngx_list_t *headers)
{
    ngx_uint_t        i;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    for (part = &headers->part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            if (h[i].key.len == ngx_http_corral_keep_header.len
                && ngx_strncasecmp(h[i].key.data,
                                   ngx_http_corral_keep_header.data,
                                   h[i].key.len)
                   == 0)
            {
                h[i].hash = 0;
            }
        }
    }
}
