
/*
 * What the files of ngx_http_corral_module share (see module/README.md):
 *
 *     ngx_http_corral_module.c    the module: directives, configuration,
 *                                 variables, the handler's registration
 *     ngx_http_corral_gateway.c   the preaccess handler: addressing, route
 *                                 lookup, admission, the module's answers
 *     ngx_http_corral_token.c     the envd and traffic token checks and the
 *                                 gateway signature
 *     ngx_http_corral_cache.c     the shared-memory route cache, corral_cache
 *     ngx_http_corral_balancer.c  corral_data_balancer
 *     ngx_http_corral_keep.c      the keep filter and the clean reuse wrapper
 *
 * The per-request state is filled by the handler and read by the variables,
 * the balancer and the keep filter.
 */


#ifndef _NGX_HTTP_CORRAL_MODULE_H_INCLUDED_
#define _NGX_HTTP_CORRAL_MODULE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


#define NGX_HTTP_CORRAL_ID_LEN      20
#define NGX_HTTP_CORRAL_ADDR_MAX    64
#define NGX_HTTP_CORRAL_KEY_MAX     128
#define NGX_HTTP_CORRAL_MASK_MAX    200  /* maskRequestHost, ${PORT} unexpanded */


struct data_addr_allow;


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
    /* the Host its service sees: its maskRequestHost expanded, or empty */
    ngx_str_t                     host;
    /* upstream parsed, by the balancer, once per request */
    ngx_addr_t                   *peer;
} ngx_http_corral_ctx_t;


/* a sandbox's route: the lookup's answer, or a copy of a cached one */

typedef struct {
    ngx_uint_t                    found;
    ngx_uint_t                    paused;   /* not reachable now, not cached */
    /* its worker's tunnel is down (decision 0087): not cached either */
    ngx_uint_t                    unreachable;
    ngx_uint_t                    secure;
    ngx_uint_t                    public;
    ngx_str_t                     addr;
    ngx_str_t                     key;
    ngx_str_t                     mask;     /* maskRequestHost, or empty */
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


/* ngx_http_corral_gateway.c */

ngx_int_t ngx_http_corral_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_corral_respond(ngx_http_request_t *r, ngx_uint_t status,
    char *message);
ngx_int_t ngx_http_corral_header(ngx_http_request_t *r, char *name,
    ngx_str_t *value);

/* ngx_http_corral_token.c */

ngx_int_t ngx_http_corral_check_envd(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx);
ngx_int_t ngx_http_corral_check_traffic(ngx_http_request_t *r,
    ngx_http_corral_loc_conf_t *clcf, ngx_http_corral_ctx_t *ctx);
ngx_int_t ngx_http_corral_sign(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route);

/* ngx_http_corral_cache.c */

char *ngx_http_corral_cache(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
ngx_int_t ngx_http_corral_cache_get(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route);
void ngx_http_corral_cache_put(ngx_http_request_t *r,
    ngx_http_corral_ctx_t *ctx, ngx_http_corral_route_t *route);

/* ngx_http_corral_balancer.c */

char *ngx_http_corral_data_balancer(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_uint_t ngx_http_corral_balanced(ngx_http_upstream_srv_conf_t *uscf);

/* ngx_http_corral_keep.c */

ngx_int_t ngx_http_corral_keep_init(ngx_conf_t *cf);


extern ngx_module_t  ngx_http_corral_module;


#endif /* _NGX_HTTP_CORRAL_MODULE_H_INCLUDED_ */
