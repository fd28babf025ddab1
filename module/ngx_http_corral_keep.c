
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
 */


#include <openssl/crypto.h>

#include "ngx_http_corral_module.h"


static ngx_http_output_header_filter_pt  ngx_http_next_header_filter;


static ngx_int_t ngx_http_corral_keep_filter(ngx_http_request_t *r);
static ngx_int_t ngx_http_corral_keep_vouched(ngx_list_t *headers,
    ngx_str_t *signature);
static void ngx_http_corral_keep_hide(ngx_list_t *headers);


static ngx_str_t  ngx_http_corral_keep_header = ngx_string("X-Corral-Keep");


ngx_int_t
ngx_http_corral_keep_init(ngx_conf_t *cf)
{
    ngx_http_next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = ngx_http_corral_keep_filter;

    return NGX_OK;
}


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
