
/*
 * ngx_http_corral_module: the data plane of Corral in nginx.
 *
 * A preaccess-phase handler (ngx_http_corral_gateway.c) that, for a request
 * addressed to port P of sandbox S (Host "P-S.<domain>", or the E2B headers
 * E2b-Sandbox-Id and E2b-Sandbox-Port), resolves the worker's data port
 * (through the route cache, ngx_http_corral_cache.c), checks the sandbox's
 * tokens (ngx_http_corral_token.c) and sets the variables proxy_pass and
 * proxy_set_header use:
 *
 *     $corral_upstream           the worker's data port, "IP:port", inside
 *                                corral_upstream_allow
 *     $corral_sandbox_id         S
 *     $corral_sandbox_port       P
 *     $corral_host               the Host the sandbox's service is sent:
 *                                its maskRequestHost with ${PORT} as P, or
 *                                the request's own host
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
 * The contract is docs/data-plane.md.
 *
 * This file is the module itself: its directives (corral_cache's handler
 * is with the cache, corral_data_balancer's with the balancer), its
 * configuration, its variables and the handler's place in the phases.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "data_addr.h"
#include "ngx_http_corral_module.h"


#define NGX_HTTP_CORRAL_SECRET_MAX  4096


static ngx_int_t ngx_http_corral_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_corral_add_variables(ngx_conf_t *cf);
static void *ngx_http_corral_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_corral_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_corral_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static ngx_int_t ngx_http_corral_init(ngx_conf_t *cf);
static char *ngx_http_corral_secret_file(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ssize_t ngx_http_corral_secret_read(ngx_conf_t *cf, u_char *name,
    u_char **buf);
static ssize_t ngx_http_corral_secret_read_fd(ngx_conf_t *cf, ngx_fd_t fd,
    u_char *name, u_char **buf);
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
    NGX_HTTP_CORRAL_VAR_HOST,
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

    { ngx_string("corral_host"), NULL, ngx_http_corral_variable,
      NGX_HTTP_CORRAL_VAR_HOST, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("corral_lookup_key"), NULL, ngx_http_corral_variable,
      NGX_HTTP_CORRAL_VAR_LOOKUP_KEY, NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


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

    case NGX_HTTP_CORRAL_VAR_HOST:

        /* no mask: the request's own host, as $host gives it */

        s = ctx->host.len ? &ctx->host : &r->main->headers_in.server;
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


/*
 * corral_secret_file PATH; reads the gateway secret once, when the
 * configuration is loaded (by the master, before it drops privileges), and
 * refuses a file that group or others can read, or a short secret.
 */

static char *
ngx_http_corral_secret_file(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_corral_loc_conf_t *clcf = conf;

    u_char     *buf;
    size_t      len;
    ssize_t     n;
    ngx_str_t  *value, path;

    if (clcf->secret.data != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;
    path = value[1];

    if (ngx_conf_full_name(cf->cycle, &path, 1) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    n = ngx_http_corral_secret_read(cf, path.data, &buf);
    if (n == NGX_ERROR) {
        return NGX_CONF_ERROR;
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
}


/*
 * At most NGX_HTTP_CORRAL_SECRET_MAX bytes of the file name, into *buf (from
 * the configuration pool); NGX_ERROR, logged, when it cannot be read. The
 * file is closed, read or not.
 */

static ssize_t
ngx_http_corral_secret_read(ngx_conf_t *cf, u_char *name, u_char **buf)
{
    ssize_t   n;
    ngx_fd_t  fd;

    fd = ngx_open_file(name, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);
    if (fd == NGX_INVALID_FILE) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           ngx_open_file_n " \"%s\" failed", name);
        return NGX_ERROR;
    }

    n = ngx_http_corral_secret_read_fd(cf, fd, name, buf);

    if (ngx_close_file(fd) == NGX_FILE_ERROR) {
        ngx_conf_log_error(NGX_LOG_ALERT, cf, ngx_errno,
                           ngx_close_file_n " \"%s\" failed", name);
    }

    return n;
}


/* the mode is checked on the open file, so the file read is the one checked */

static ssize_t
ngx_http_corral_secret_read_fd(ngx_conf_t *cf, ngx_fd_t fd, u_char *name,
    u_char **buf)
{
    ssize_t          n;
    ngx_file_info_t  fi;

    if (ngx_fd_info(fd, &fi) == NGX_FILE_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           ngx_fd_info_n " \"%s\" failed", name);
        return NGX_ERROR;
    }

    if (ngx_file_access(&fi) & 077) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"%s\" is readable by group or others; "
                           "chmod 600 it", name);
        return NGX_ERROR;
    }

    *buf = ngx_pnalloc(cf->pool, NGX_HTTP_CORRAL_SECRET_MAX);
    if (*buf == NULL) {
        return NGX_ERROR;
    }

    n = ngx_read_fd(fd, *buf, NGX_HTTP_CORRAL_SECRET_MAX);
    if (n == -1) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           ngx_read_fd_n " \"%s\" failed", name);
        return NGX_ERROR;
    }

    return n;
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
