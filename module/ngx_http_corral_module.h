
/*
 * What ngx_http_corral_module.c and ngx_http_corral_balancer.c share: the
 * per-request state (the access handler fills it, the balancer reads it) and
 * the balancer's directive, registered with the module's other directives,
 * and the header filter that decides whether a data port connection is kept.
 */


#ifndef _NGX_HTTP_CORRAL_MODULE_H_INCLUDED_
#define _NGX_HTTP_CORRAL_MODULE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


typedef struct {
    ngx_uint_t                    done;
    ngx_uint_t                    status;
    ngx_http_request_t           *subrequest;
    ngx_str_t                     id;
    ngx_str_t                     port;
    ngx_uint_t                    port_n;
    /* set once the request is admitted, inside corral_upstream_allow */
    ngx_str_t                     upstream;
    ngx_str_t                     signature;
    ngx_str_t                     secret;
    /* upstream parsed, by the balancer, once per request */
    ngx_addr_t                   *peer;
} ngx_http_corral_ctx_t;


char *ngx_http_corral_data_balancer(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_uint_t ngx_http_corral_balanced(ngx_http_upstream_srv_conf_t *uscf);
ngx_int_t ngx_http_corral_keep_init(ngx_conf_t *cf);


extern ngx_module_t  ngx_http_corral_module;


#endif /* _NGX_HTTP_CORRAL_MODULE_H_INCLUDED_ */
