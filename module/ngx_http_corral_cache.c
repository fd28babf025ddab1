
/*
 * The route cache of ngx_http_corral_module: the lookup's answers, 404s
 * included, in a shared-memory zone that every worker process reads, so that
 * most requests make no subrequest. An rbtree keyed by the crc32 of the
 * sandbox id finds an entry; an LRU queue gives the entries to expire (from
 * its cold end, a few per store) and, when the zone is full, the one to
 * evict. An entry lives ttl, a 404 negative_ttl; a paused sandbox is never
 * stored, since a resume may come from any gateway host at any moment.
 *
 *     corral_cache zone=NAME:SIZE [ttl=2s] [negative_ttl=1s];
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_corral_module.h"


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
    u_char                        mask_len;
    u_char                        id[NGX_HTTP_CORRAL_ID_LEN];
    u_char                        addr[NGX_HTTP_CORRAL_ADDR_MAX];
    u_char                        key[NGX_HTTP_CORRAL_KEY_MAX];
    u_char                        mask[NGX_HTTP_CORRAL_MASK_MAX];
} ngx_http_corral_node_t;


static ngx_int_t ngx_http_corral_cache_copy(ngx_http_request_t *r,
    ngx_http_corral_node_t *cn, ngx_http_corral_route_t *route);
static ngx_http_corral_node_t *ngx_http_corral_cache_alloc(
    ngx_http_corral_cache_t *cache);
static void ngx_http_corral_cache_set(ngx_http_corral_node_t *cn,
    ngx_http_corral_route_t *route, ngx_msec_t expire);
static ngx_http_corral_node_t *ngx_http_corral_cache_find(
    ngx_http_corral_cache_t *cache, ngx_str_t *id, uint32_t hash);
static void ngx_http_corral_cache_expire(ngx_http_corral_cache_t *cache,
    ngx_uint_t force);
static void ngx_http_corral_rbtree_insert_value(ngx_rbtree_node_t *temp,
    ngx_rbtree_node_t *node, ngx_rbtree_node_t *sentinel);
static ngx_int_t ngx_http_corral_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static ngx_int_t ngx_http_corral_parse_zone(ngx_conf_t *cf, ngx_str_t *arg,
    ngx_str_t *name, ssize_t *size);
static ngx_int_t ngx_http_corral_parse_ttl(ngx_conf_t *cf, ngx_str_t *arg,
    size_t prefix, ngx_msec_t *out);
static char *ngx_http_corral_add_zone(ngx_conf_t *cf,
    ngx_http_corral_main_conf_t *cmcf, ngx_str_t *name, ssize_t size,
    ngx_msec_t ttl, ngx_msec_t negative_ttl);


ngx_int_t
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

    } else {
        rc = ngx_http_corral_cache_copy(r, cn, route);

        if (rc == NGX_OK) {
            ngx_queue_remove(&cn->queue);
            ngx_queue_insert_head(&cache->sh->queue, &cn->queue);
        }
    }

    ngx_shmtx_unlock(&cache->shpool->mutex);

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "corral cache %V: %s", &ctx->id,
                   rc == NGX_OK ? "hit" : "miss");

    return rc;
}


/* copied out, with the lock held: the node may be reused once it is released */

static ngx_int_t
ngx_http_corral_cache_copy(ngx_http_request_t *r, ngx_http_corral_node_t *cn,
    ngx_http_corral_route_t *route)
{
    ngx_memzero(route, sizeof(ngx_http_corral_route_t));

    route->found = cn->found;
    route->secure = cn->secure;
    route->public = cn->public;

    if (!cn->found) {
        return NGX_OK;
    }

    route->addr.data = ngx_pnalloc(r->pool,
                                   cn->addr_len + cn->key_len + cn->mask_len);
    if (route->addr.data == NULL) {
        return NGX_ERROR;
    }

    route->addr.len = cn->addr_len;
    ngx_memcpy(route->addr.data, cn->addr, cn->addr_len);

    route->key.data = route->addr.data + cn->addr_len;
    route->key.len = cn->key_len;
    ngx_memcpy(route->key.data, cn->key, cn->key_len);

    route->mask.data = route->key.data + cn->key_len;
    route->mask.len = cn->mask_len;
    ngx_memcpy(route->mask.data, cn->mask, cn->mask_len);

    return NGX_OK;
}


void
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

    if (route->paused || route->unreachable) {
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
        cn = ngx_http_corral_cache_alloc(cache);

        if (cn == NULL) {
            ngx_shmtx_unlock(&cache->shpool->mutex);

            ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                          "corral: cache zone \"%V\" is full",
                          &cmcf->shm_zone->shm.name);
            return;
        }

        cn->node.key = hash;
        ngx_memcpy(cn->id, ctx->id.data, NGX_HTTP_CORRAL_ID_LEN);

        ngx_rbtree_insert(&cache->sh->rbtree, &cn->node);

    } else {
        ngx_queue_remove(&cn->queue);
    }

    ngx_queue_insert_head(&cache->sh->queue, &cn->queue);

    ngx_http_corral_cache_set(cn, route, ngx_current_msec + ttl);

    ngx_shmtx_unlock(&cache->shpool->mutex);
}


/* the lookup's answers were checked to fit: ADDR_MAX, KEY_MAX, MASK_MAX */

static void
ngx_http_corral_cache_set(ngx_http_corral_node_t *cn,
    ngx_http_corral_route_t *route, ngx_msec_t expire)
{
    cn->expire = expire;
    cn->found = route->found ? 1 : 0;
    cn->secure = route->secure ? 1 : 0;
    cn->public = route->public ? 1 : 0;
    cn->addr_len = (u_char) route->addr.len;
    cn->key_len = (u_char) route->key.len;
    cn->mask_len = (u_char) route->mask.len;

    if (route->found) {
        ngx_memcpy(cn->addr, route->addr.data, route->addr.len);
        ngx_memcpy(cn->key, route->key.data, route->key.len);
        ngx_memcpy(cn->mask, route->mask.data, route->mask.len);
    }
}


/*
 * A new node, with the lock held; when the zone is full the coldest entry is
 * evicted to make room, fresh or not: a full zone must not stop caching.
 */

static ngx_http_corral_node_t *
ngx_http_corral_cache_alloc(ngx_http_corral_cache_t *cache)
{
    ngx_http_corral_node_t  *cn;

    cn = ngx_slab_alloc_locked(cache->shpool, sizeof(ngx_http_corral_node_t));

    if (cn != NULL) {
        return cn;
    }

    ngx_http_corral_cache_expire(cache, 1);

    return ngx_slab_alloc_locked(cache->shpool,
                                 sizeof(ngx_http_corral_node_t));
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

char *
ngx_http_corral_cache(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_corral_main_conf_t *cmcf = conf;

    ssize_t      size;
    ngx_str_t   *value, name;
    ngx_uint_t   i;
    ngx_msec_t   ttl, negative_ttl;

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
            if (ngx_http_corral_parse_zone(cf, &value[i], &name, &size)
                != NGX_OK)
            {
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

    return ngx_http_corral_add_zone(cf, cmcf, &name, size, ttl, negative_ttl);
}


/* "zone=NAME:SIZE", at least 8 pages, as limit_req_zone's */

static ngx_int_t
ngx_http_corral_parse_zone(ngx_conf_t *cf, ngx_str_t *arg, ngx_str_t *name,
    ssize_t *size)
{
    u_char     *p;
    ngx_str_t   s;

    name->data = arg->data + 5;

    p = (u_char *) ngx_strchr(name->data, ':');

    if (p == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid zone size \"%V\"", arg);
        return NGX_ERROR;
    }

    name->len = p - name->data;

    s.data = p + 1;
    s.len = arg->data + arg->len - s.data;

    *size = ngx_parse_size(&s);

    if (*size == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid zone size \"%V\"", arg);
        return NGX_ERROR;
    }

    if (*size < (ssize_t) (8 * ngx_pagesize)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "zone \"%V\" is too small", arg);
        return NGX_ERROR;
    }

    return NGX_OK;
}


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
ngx_http_corral_add_zone(ngx_conf_t *cf, ngx_http_corral_main_conf_t *cmcf,
    ngx_str_t *name, ssize_t size, ngx_msec_t ttl, ngx_msec_t negative_ttl)
{
    ngx_http_corral_cache_t  *cache;

    cache = ngx_pcalloc(cf->pool, sizeof(ngx_http_corral_cache_t));
    if (cache == NULL) {
        return NGX_CONF_ERROR;
    }

    cache->ttl = ttl;
    cache->negative_ttl = negative_ttl;

    cmcf->shm_zone = ngx_shared_memory_add(cf, name, size,
                                           &ngx_http_corral_module);
    if (cmcf->shm_zone == NULL) {
        return NGX_CONF_ERROR;
    }

    if (cmcf->shm_zone->data) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "zone \"%V\" is already used", name);
        return NGX_CONF_ERROR;
    }

    cmcf->shm_zone->init = ngx_http_corral_init_zone;
    cmcf->shm_zone->data = cache;

    return NGX_CONF_OK;
}
