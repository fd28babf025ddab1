#include "egress_pool.h"

#include "clock.h"
#include "containers.h"
#include "egress_dir.h"
#include "egress_proxy.h"
#include "egress_resolver.h"
#include "log.h"
#include "sandbox_body.h"
#include "sbnet.h"
#include "secret.h"
#include "states.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POOL_MAX 16
#define POOL_TIMEOUT_MS 60000L
#define POOL_RETRY_S 5
#define POOL_IDLE_MS 1000         /* refill only after this long without a create */
#define POOL_COLLECT_MS 30000     /* how often what dockerd would not remove is tried again */
#define NAME_LEN 352              /* a container name: corral-<id>-<wid>-egress */
#define DIR_LEN (WCONF_STR + 352) /* a config directory or file path */

struct member {
    char id[24]; /* EGRESS_POOL_PREFIX and hex: its container's and directory's name part */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t th;
    int running, stop, size, n;
    int64_t last_create; /* clock_now_ms() of the latest create: refill waits for quiet */
    struct member ready[POOL_MAX];
    const struct worker_conf *c;
    char wid[64];
    char root[WCONF_STR + 32]; /* <state_dir>/egress */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static void member_name(char *out, size_t len, const char *id)
{
    egress_proxy_name(out, len, id, pool.wid);
}

static void dir_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", pool.root, name);
}

/* Removes a config directory and its files (egress_dir.h). */
static void remove_dir(const char *name)
{
    char dir[DIR_LEN], file[DIR_LEN + 16];

    egress_resolver_close(name); /* a sandbox's, left by a previous run */
    dir_of(dir, sizeof(dir), name);
    for (size_t i = 0; egress_dir_files[i]; i++) {
        snprintf(file, sizeof(file), "%s/%s", dir, egress_dir_files[i]);
        unlink(file);
    }
    rmdir(dir);
}

/* The pool id a directory was made for: its network is named after it. */
static int pool_id_of(const char *name, char *id, size_t len)
{
    char file[DIR_LEN + 16];
    FILE *f;
    int ok;

    dir_of(file, sizeof(file), name);
    strncat(file, "/pool-id", sizeof(file) - strlen(file) - 1);
    f = fopen(file, "r");
    ok = f && fgets(id, (int)len, f) &&
         strncmp(id, EGRESS_POOL_PREFIX, strlen(EGRESS_POOL_PREFIX)) == 0;
    if (f)
        fclose(f);
    id[ok ? strcspn(id, "\n") : 0] = '\0';
    return ok ? 0 : -1;
}

static int call(struct docker *d, const char *method, const char *path, json_t *body, long ok,
                char *err, size_t errlen)
{
    json_t *ans = NULL;
    long status = 0;
    int rc = docker_call(d, method, path, body, POOL_TIMEOUT_MS, &status, &ans, err, errlen);

    if (rc == 0 && status != ok) {
        snprintf(err, errlen, "egress pool: %s %.200s: %.200s", method, path,
                 docker_errmsg(ans, status));
        rc = status == 409 ? 2 : 1;
    }
    json_decref(ans);
    return rc;
}

/* DELETE path: 0 once the object is gone (removed now, or already). */
static int delete_gone(struct docker *d, const char *path)
{
    char err[256];
    json_t *ans = NULL;
    long status = 0;
    int rc = docker_call(d, "DELETE", path, NULL, POOL_TIMEOUT_MS, &status, &ans, err, sizeof(err));

    json_decref(ans);
    return rc == 0 && (status == 204 || status == 404) ? 0 : -1;
}

/* A proxy's container and its network (id: the pool id it was made under).
 * 0 both gone, -1 one stayed (dockerd down or refusing). */
static int remove_parts(struct docker *d, const char *container, const char *id)
{
    char net[SBNET_NAME_MAX], path[NAME_LEN + 64];
    int rc;

    snprintf(path, sizeof(path), "/containers/%s?force=1", container);
    rc = delete_gone(d, path);
    sbnet_name(net, sizeof(net), id, pool.wid, SBNET_INTERNAL);
    snprintf(path, sizeof(path), "/networks/%s", net);
    return delete_gone(d, path) == 0 && rc == 0 ? 0 : -1;
}

/* A member's container, its network and its directory (dir: the directory's
 * name now, the pool id or the sandbox's). What dockerd would not remove now
 * the refill thread's sweep removes later (collect_idle). */
static void remove_member(struct docker *d, const char *container, const char *id, const char *dir)
{
    remove_parts(d, container, id);
    remove_dir(dir);
}

static int write_pool_id(const struct member *m)
{
    char file[DIR_LEN + 16];
    FILE *f;

    dir_of(file, sizeof(file), m->id);
    strncat(file, "/pool-id", sizeof(file) - strlen(file) - 1);
    f = fopen(file, "w");
    if (!f)
        return -1;
    fprintf(f, "%s\n", m->id);
    return fclose(f);
}

/* One ready proxy: its directory, its internal network, its container made
 * on that network (as EGRESS_ALIAS), joined to the egress network, started.
 * A sandbox given it needs only its own container made. */
static int make_member(struct docker *d, struct member *m, char *err, size_t errlen)
{
    char hex[17], dir[DIR_LEN], name[NAME_LEN], net[SBNET_NAME_MAX], path[NAME_LEN + 64];
    json_t *body;
    int rc;

    if (secret_random_hex(hex, 8) != 0) {
        snprintf(err, errlen, "egress pool: no randomness");
        return 1;
    }
    snprintf(m->id, sizeof(m->id), EGRESS_POOL_PREFIX "%s", hex);
    dir_of(dir, sizeof(dir), m->id);
    if (mkdir(dir, 0755) != 0 || write_pool_id(m) != 0) {
        snprintf(err, errlen, "egress pool: %.200s: %s", dir, strerror(errno));
        remove_dir(m->id);
        return 1;
    }
    member_name(name, sizeof(name), m->id);
    sbnet_name(net, sizeof(net), m->id, pool.wid, SBNET_INTERNAL);
    rc = sbnet_ensure(d, pool.wid, m->id, SBNET_INTERNAL, NULL, err, errlen);
    if (rc == 0) {
        body = egress_pool_body(pool.c, pool.wid, dir, net);
        snprintf(path, sizeof(path), "/containers/create?name=%s", name);
        rc = body ? call(d, "POST", path, body, 201, err, errlen) : 1;
        json_decref(body);
    }
    if (rc == 0) {
        sbnet_name(net, sizeof(net), "", pool.wid, SBNET_EGRESS);
        snprintf(path, sizeof(path), "/networks/%s/connect", net);
        body = json_pack("{s:s}", "Container", name);
        rc = body ? call(d, "POST", path, body, 200, err, errlen) : 1;
        json_decref(body);
    }
    if (rc == 0) {
        snprintf(path, sizeof(path), "/containers/%s/start", name);
        rc = call(d, "POST", path, NULL, 204, err, errlen);
    }
    if (rc != 0)
        remove_member(d, name, m->id, m->id);
    return rc;
}

static void sweep_leftovers(struct docker *d);

/* 1 when a config directory in the pool's root names pool id `id`: a member
 * not yet given out, or a sandbox's (its pool-id file). */
static int id_in_use(const char *id)
{
    char got[32];
    DIR *dir = opendir(pool.root);
    struct dirent *e;
    int used = 0;

    if (!dir)
        return 1; /* unknown: keep */
    while (!used && (e = readdir(dir)))
        used = e->d_name[0] != '.' && pool_id_of(e->d_name, got, sizeof(got)) == 0 &&
               strcmp(got, id) == 0;
    closedir(dir);
    return used;
}

/* What a removal while dockerd was down or stopping left: members no longer
 * running that nobody holds (a member is made on this thread, and one being
 * handed out is checked running first), and pooled internal networks that no
 * directory names (a running proxy still on one keeps dockerd from removing
 * it). Runs on the refill thread only: a member being made is never seen half
 * made. */
static void collect_idle(struct docker *d)
{
    static const char pfx[] = "corral-" EGRESS_POOL_PREFIX;
    char path[NAME_LEN + 64];
    json_t *list, *o;
    size_t i;

    if ((list = containers_list_own(d, "containers/json", "all=1&", pool.wid, "egress-pool")))
        json_array_foreach(list, i, o)
        {
            const char *name = json_string_value(json_array_get(json_object_get(o, "Names"), 0));
            const char *state = json_string_value(json_object_get(o, "State"));
            if (!name || strncmp(name + (name[0] == '/'), pfx, strlen(pfx)) != 0 || !state ||
                dk_state_decode(state) == DK_RUNNING)
                continue;
            snprintf(path, sizeof(path), "/containers/%s?force=1",
                     json_string_value(json_object_get(o, "Id")) ?: "-");
            delete_gone(d, path);
        }
    json_decref(list);
    if ((list = containers_list_own(d, "networks", "", pool.wid, "sandbox")))
        json_array_foreach(list, i, o)
        {
            const char *name = json_string_value(json_object_get(o, "Name"));
            const char *id =
                json_string_value(json_object_get(json_object_get(o, "Labels"), "corral.sandbox"));
            if (!name || !id || strncmp(name, pfx, strlen(pfx)) != 0 ||
                strncmp(id, EGRESS_POOL_PREFIX, strlen(EGRESS_POOL_PREFIX)) != 0 || id_in_use(id))
                continue;
            snprintf(path, sizeof(path), "/networks/%s",
                     json_string_value(json_object_get(o, "Id")) ?: "-");
            if (delete_gone(d, path) == 0)
                log_info("egress pool: network %s, left by a removal that failed, removed", name);
        }
    json_decref(list);
}

/* Sweeps first (off the main thread: adopting sandboxes must not wait), then
 * keeps the pool full, and now and then collects what removals left. */
static void *refill_main(void *arg)
{
    struct docker d = {0};
    char err[512];
    int64_t collect_at = 0; /* at once: an earlier run may have left some */

    (void)arg;
    if (docker_init(&d, pool.c->docker_socket) != 0)
        return NULL;
    sweep_leftovers(&d);
    pthread_mutex_lock(&pool.mu);
    while (!pool.stop) {
        struct member m;
        int rc;
        int64_t quiet = pool.last_create + POOL_IDLE_MS - clock_now_ms();
        if (clock_now_ms() >= collect_at) {
            pthread_mutex_unlock(&pool.mu);
            collect_idle(&d);
            pthread_mutex_lock(&pool.mu);
            collect_at = clock_now_ms() + POOL_COLLECT_MS;
            continue;
        }
        if (pool.n >= pool.size || quiet > 0) { /* full, or a proxy made beside a starting
                                                   sandbox would slow it down */
            clock_cond_wait_until(&pool.wake, &pool.mu,
                                  pool.n >= pool.size ? collect_at : clock_now_ms() + quiet);
            continue;
        }
        pthread_mutex_unlock(&pool.mu);
        rc = make_member(&d, &m, err, sizeof(err));
        if (rc != 0)
            log_warn("%s", err);
        pthread_mutex_lock(&pool.mu);
        if (rc == 0) /* only this thread adds to the pool beyond what was taken from it */
            pool.ready[pool.n++] = m;
        else if (!pool.stop) /* dockerd down or refusing: not in a tight loop */
            clock_cond_wait_until(&pool.wake, &pool.mu, clock_now_ms() + POOL_RETRY_S * 1000);
    }
    pthread_mutex_unlock(&pool.mu);
    docker_close(&d);
    return NULL;
}

/* Ready proxies of an earlier run are unknown to us now: removed, with their
 * networks. Directories (and networks) of sandboxes whose proxy is gone:
 * removed. */
static void sweep_leftovers(struct docker *d)
{
    char *enc, path[1024], err[256], name[NAME_LEN], id[32];
    json_t *list = NULL, *ctr;
    long status = 0;
    size_t i;
    DIR *dir;
    struct dirent *e;

    enc = docker_filters(d, json_pack("{s:[s+, s], s:[s]}", "label", "corral.worker=", pool.wid,
                                      "corral.role=egress-pool", "name",
                                      "corral-" EGRESS_POOL_PREFIX));
    snprintf(path, sizeof(path), "/containers/json?all=1&filters=%s", enc ? enc : "");
    curl_free(enc);
    if (docker_call(d, "GET", path, NULL, POOL_TIMEOUT_MS, &status, &list, err, sizeof(err)) == 0 &&
        status == 200)
        json_array_foreach(list, i, ctr)
        {
            snprintf(path, sizeof(path), "/containers/%s?force=1",
                     json_string_value(json_object_get(ctr, "Id")) ?: "-");
            call(d, "DELETE", path, NULL, 204, err, sizeof(err));
        }
    json_decref(list);
    if (!(dir = opendir(pool.root)))
        return;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        member_name(name, sizeof(name), e->d_name);
        snprintf(path, sizeof(path), "/containers/%s/json", name);
        if (strncmp(e->d_name, EGRESS_POOL_PREFIX, strlen(EGRESS_POOL_PREFIX)) != 0 &&
            call(d, "GET", path, NULL, 200, err, sizeof(err)) != 1)
            continue; /* a sandbox's, still in use */
        if (pool_id_of(e->d_name, id, sizeof(id)) == 0)
            remove_member(d, name, id, e->d_name);
        else
            remove_dir(e->d_name);
    }
    closedir(dir);
}

int egress_pool_start(const struct worker_conf *c, const char *wid, int size)
{
    pool.c = c;
    pool.size = size < POOL_MAX ? size : POOL_MAX;
    pool.stop = 0;
    pool.n = 0;
    snprintf(pool.wid, sizeof(pool.wid), "%s", wid);
    snprintf(pool.root, sizeof(pool.root), "%s/egress", c->state_dir);
    if (mkdir(pool.root, 0755) != 0 && errno != EEXIST) {
        log_err("egress pool: mkdir %s: %s", pool.root, strerror(errno));
        return -1;
    }
    if (pthread_create(&pool.th, NULL, refill_main, NULL) != 0)
        return -1;
    pool.running = 1;
    return 0;
}

/* The ready proxies, removed: they carry the old worker id. */
static void drop_ready(void)
{
    struct docker d = {0};
    char name[NAME_LEN];

    if (docker_init(&d, pool.c->docker_socket) != 0)
        return;
    for (int i = 0; i < pool.n; i++) {
        member_name(name, sizeof(name), pool.ready[i].id);
        remove_member(&d, name, pool.ready[i].id, pool.ready[i].id);
    }
    pool.n = 0;
    docker_close(&d);
}

int egress_pool_restart(const char *wid)
{
    if (!pool.running)
        return 0;
    egress_pool_stop();
    drop_ready();
    return egress_pool_start(pool.c, wid, pool.size);
}

void egress_pool_stop(void)
{
    if (!pool.running)
        return;
    pthread_mutex_lock(&pool.mu);
    pool.stop = 1;
    pthread_cond_signal(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    pthread_join(pool.th, NULL);
    pool.running = 0;
}

/* Gives back a member just popped: there is room, it was its place. */
static void push(const struct member *m)
{
    pthread_mutex_lock(&pool.mu);
    pool.ready[pool.n++] = *m;
    pthread_mutex_unlock(&pool.mu);
}

static int pop(struct member *m)
{
    int got;

    pthread_mutex_lock(&pool.mu);
    got = pool.n > 0;
    if (got)
        *m = pool.ready[--pool.n];
    pthread_cond_signal(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    return got;
}

/* 1 when a member's container runs (not exited, paused or restarting):
 * dockerd restarted without live-restore leaves every ready proxy exited,
 * and a sandbox given one had no egress at all (issue 34). 0 not running or
 * gone, -1 dockerd down. */
static int member_runs(struct docker *d, const char *container)
{
    char path[NAME_LEN + 64], err[256];
    long status = 0;
    json_t *info = NULL, *st;
    int runs;

    snprintf(path, sizeof(path), "/containers/%s/json", container);
    if (docker_call(d, "GET", path, NULL, POOL_TIMEOUT_MS, &status, &info, err, sizeof(err)) != 0)
        return -1;
    st = json_object_get(info, "State");
    runs = status == 200 && json_is_true(json_object_get(st, "Running")) &&
           !json_is_true(json_object_get(st, "Paused")) &&
           !json_is_true(json_object_get(st, "Restarting"));
    json_decref(info);
    return runs;
}

/* Pops a ready proxy that runs and renames it for sbid: from then on kill
 * removes it by that name. One that does not run, or will not be renamed
 * (gone, e.g. removed with an old worker id), is dropped and the next tried;
 * if the name is taken (a proxy of this sandbox left by a crash), none is
 * used. 0 (m set), 2 none, -1 down. */
static int claim(struct docker *d, const char *name, struct member *m, char *err, size_t errlen)
{
    char old[NAME_LEN], path[2 * NAME_LEN + 64];
    int rc;

    while (pop(m)) {
        member_name(old, sizeof(old), m->id);
        if ((rc = member_runs(d, old)) <= 0) {
            if (rc < 0) {
                push(m);
                snprintf(err, errlen, "egress pool: dockerd does not answer");
                return -1;
            }
            log_warn("egress pool: ready proxy %s is not running; removed", m->id);
            remove_member(d, old, m->id, m->id);
            continue;
        }
        snprintf(path, sizeof(path), "/containers/%s/rename?name=%s", old, name);
        if ((rc = call(d, "POST", path, NULL, 204, err, errlen)) <= 0)
            return rc;
        if (rc == 2) { /* 409: the name is taken, the member is fine: keep it */
            push(m);
            return 2;
        }
        log_warn("%s; trying another", err);
        remove_member(d, old, m->id, m->id);
    }
    return 2;
}

int egress_pool_take(struct docker *d, const char *sbid, json_t *policy, char *net, size_t netlen,
                     char *err, size_t errlen)
{
    char from[DIR_LEN], to[DIR_LEN], name[NAME_LEN], id[32];
    struct member m;
    int rc;

    member_name(name, sizeof(name), sbid);
    dir_of(to, sizeof(to), sbid);
    if (pool_id_of(sbid, id, sizeof(id)) == 0) { /* a create delivered again: it has one */
        sbnet_name(net, netlen, id, pool.wid, SBNET_INTERNAL);
        return 0;
    }
    if (!pool.running)
        return 2;
    if ((rc = claim(d, name, &m, err, errlen)) != 0)
        return rc;
    /* Its directory becomes the sandbox's (the bind mount follows it). */
    dir_of(from, sizeof(from), m.id);
    if (rename(from, to) != 0) {
        snprintf(err, errlen, "egress pool: rename %.200s: %s", from, strerror(errno));
        remove_member(d, name, m.id, m.id);
        return 1;
    }
    sbnet_name(net, netlen, m.id, pool.wid, SBNET_INTERNAL);
    return egress_dir_write(pool.c, sbid, policy, err, errlen) == 0 ? 0 : 1;
}

void egress_pool_recheck(struct docker *d)
{
    struct member keep[POOL_MAX], m;
    char name[NAME_LEN];
    int n = 0, dropped = 0;

    if (!pool.running)
        return;
    while (pop(&m)) {
        member_name(name, sizeof(name), m.id);
        if (member_runs(d, name) != 0) /* running, or dockerd gone again: kept for claim */
            keep[n++] = m;
        else {
            remove_member(d, name, m.id, m.id);
            dropped++;
        }
    }
    /* The refill thread may have added some meanwhile: never past POOL_MAX. */
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&pool.mu);
        int room = pool.n < POOL_MAX;
        if (room)
            pool.ready[pool.n++] = keep[i];
        pthread_mutex_unlock(&pool.mu);
        if (!room) {
            member_name(name, sizeof(name), keep[i].id);
            remove_member(d, name, keep[i].id, keep[i].id);
        }
    }
    if (dropped)
        log_info("egress pool: %d ready prox%s not running after dockerd's return; removed, "
                 "refilling",
                 dropped, dropped == 1 ? "y" : "ies");
}

void egress_pool_busy(void)
{
    pthread_mutex_lock(&pool.mu);
    pool.last_create = clock_now_ms();
    pthread_mutex_unlock(&pool.mu);
}

int egress_pool_forget(struct docker *d, const char *sbid)
{
    char id[32], name[NAME_LEN];

    egress_resolver_close(sbid);
    if (!pool.root[0])
        return 0;
    if (pool_id_of(sbid, id, sizeof(id)) != 0) { /* its own proxy's directory */
        remove_dir(sbid);
        return 0;
    }
    member_name(name, sizeof(name), sbid);
    if (remove_parts(d, name, id) != 0)
        return -1; /* its directory names the network: kept for the kill tried again */
    remove_dir(sbid);
    return 0;
}
