#include "warm_pool.h"

#include "clock.h"
#include "envd_ready.h"
#include "log.h"
#include "sandbox_body.h"
#include "sbnet.h"
#include "secret.h"
#include "tier.h"
#include "warm_record.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MEMBERS_MAX (WARM_KINDS_MAX * WARM_SIZE_MAX)
#define COLD_WAIT_MS 1000L /* a refill's look while cold creates run */
#define RETRY_MS 5000L
#define RENAMES_MAX 64 /* claims not yet renamed; more wait for the next start */

/* The limits a create asks for (sandbox_body.c's fields); set: any at all. */
struct wlimits {
    double cpu;
    json_int_t memory_mb, pids;
    int set;
};

struct member {
    struct wlimits lim; /* made with these (a container update costs ~40 ms) */
    char id[24];        /* WARM_PREFIX and hex: its container's and network's name part */
    char ctr[72];       /* its container's id: a claim is found by it (warm_index.h) */
    char secret[65];    /* envd's init secret, in memory only */
    char ip[64];        /* envd's address: a claim need not ask dockerd */
    int kind;           /* index into c->warm */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t th;
    int running, stop, n, n_renames;
    int cold; /* cold creates running: refills wait for none */
    struct member ready[MEMBERS_MAX];
    char renames[RENAMES_MAX][72]; /* sandbox ids claimed, to be renamed */
    char renaming[72];             /* the one being renamed now, or "" */
    pthread_cond_t renamed;        /* renaming went back to "" */
    const struct worker_conf *c;
    const struct host_caps *caps;
    char wid[STATE_ID_MAX];
    char tiers[WARM_KINDS_MAX][16];         /* each kind's runtime's verified tier */
    struct wlimits learned[WARM_KINDS_MAX]; /* each kind's last claim's: the next are made so */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .renamed = PTHREAD_COND_INITIALIZER};

static struct wlimits limits_of(json_t *sb)
{
    struct wlimits l = {json_number_value(json_object_get(sb, "cpu_cores")),
                        json_integer_value(json_object_get(sb, "memory_mb")),
                        json_integer_value(json_object_get(sb, "pids_limit")), 1};
    return l;
}

static int limits_same(const struct wlimits *a, const struct wlimits *b)
{
    return a->set && b->set && a->cpu == b->cpu && a->memory_mb == b->memory_mb &&
           a->pids == b->pids;
}

/* sb asks for l (a warm sandbox made before any claim has none: the update
 * at its claim sets them). */
static void limits_into(json_t *sb, const struct wlimits *l)
{
    if (!l->set)
        return;
    if (l->cpu > 0)
        json_object_set_new(sb, "cpu_cores", json_real(l->cpu));
    if (l->memory_mb > 0)
        json_object_set_new(sb, "memory_mb", json_integer(l->memory_mb));
    if (l->pids > 0)
        json_object_set_new(sb, "pids_limit", json_integer(l->pids));
}

static int count_kind(int kind)
{
    int k = 0;

    for (int i = 0; i < pool.n; i++)
        k += pool.ready[i].kind == kind;
    return k;
}

/* The kind that most lacks members, or -1 when all are full. mu held. */
static int kind_to_fill(void)
{
    int best = -1, lack = 0;

    for (int i = 0; i < pool.c->n_warm; i++) {
        int l = pool.c->warm[i].size - count_kind(i);
        if (l > lack && pool.tiers[i][0]) {
            lack = l;
            best = i;
        }
    }
    return best;
}

/* The warm body: sandbox_body's, labelled warm, envd -warm with its secret. */
static json_t *warm_body(const struct wtemplate *t, json_t *sb, const struct sandbox_net *net,
                         const char *secret)
{
    json_t *body = sandbox_body(pool.c, t, pool.wid, sb, net);
    char *kv = NULL;

    if (!body || asprintf(&kv, "%s=%s", WARM_SECRET_ENV, secret) < 0) {
        json_decref(body);
        return NULL;
    }
    json_object_set_new(json_object_get(body, "Labels"), "corral.role", json_string("warm"));
    json_array_append_new(json_object_get(body, "Env"), json_string(kv));
    json_array_append_new(json_object_get(body, "Cmd"), json_string("-warm"));
    explicit_bzero(kv, strlen(kv));
    free(kv);
    return body;
}

/* POST path (a create) with body; its id into m. 0, 1 refused, -1. */
static int create_container(struct docker *d, const char *path, json_t *body, struct member *m,
                            char *err, size_t errlen)
{
    json_t *ans = NULL;
    long status = 0;
    const char *id;

    if (docker_call(d, "POST", path, body, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return -1;
    id = json_string_value(json_object_get(ans, "Id"));
    if (status != 201 || !id || strlen(id) >= sizeof(m->ctr)) {
        snprintf(err, errlen, "warm pool: create: dockerd answered %ld", status);
        json_decref(ans);
        return 1;
    }
    snprintf(m->ctr, sizeof(m->ctr), "%s", id);
    json_decref(ans);
    return 0;
}

/* Its network, its container, started until envd answers. 0, or 1/-1 (err)
 * with whatever was made removed. */
static int make_container(struct docker *d, struct member *m, json_t *sb, char *err, size_t errlen)
{
    const struct warm_kind *k = &pool.c->warm[m->kind];
    const struct wtemplate *t = wconf_template(pool.c, k->tmpl);
    char net[SBNET_NAME_MAX], name[256], path[320];
    struct sandbox_net sn = {.network = net, .disk_quota = pool.caps->disk_quota};
    struct ctr_state st = {0};
    json_t *body;
    int rc;

    if (!t) {
        snprintf(err, errlen, "warm pool: template %s is not this worker's", k->tmpl);
        return 1;
    }
    sbnet_name(net, sizeof(net), m->id, pool.wid, SBNET_OPEN);
    if ((rc = sbnet_ensure(d, pool.wid, m->id, SBNET_OPEN, NULL, err, errlen)) != 0)
        return rc;
    containers_own_name(name, sizeof(name), m->id, pool.wid);
    snprintf(path, sizeof(path), "/containers/create?name=%s", name);
    body = warm_body(t, sb, &sn, m->secret);
    rc = body ? create_container(d, path, body, m, err, errlen) : 1;
    json_decref(body);
    snprintf(st.sbid, sizeof(st.sbid), "%s", m->id);
    if (rc == 0)
        rc = containers_settle(d, pool.wid, name, pool.c->envd_ready_ms, &st);
    if (rc == 0 && st.state != SB_RUNNING)
        rc = 1;
    if (rc != 0) {
        snprintf(err + strlen(err), errlen - strlen(err), "%s%s", st.reason[0] ? ": " : "",
                 st.reason);
        containers_kill(d, pool.wid, m->id, path, sizeof(path));
    }
    return rc;
}

static int make_member(struct docker *d, int kind, struct member *m, char *err, size_t errlen)
{
    const struct warm_kind *k = &pool.c->warm[kind];
    char hex[17];
    json_t *sb;
    int rc;

    err[0] = '\0';
    if (secret_random_hex(hex, 8) != 0 || secret_random_hex(m->secret, 32) != 0) {
        snprintf(err, errlen, "warm pool: no randomness");
        return 1;
    }
    snprintf(m->id, sizeof(m->id), WARM_PREFIX "%s", hex);
    m->kind = kind;
    sb = json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", m->id, "workspace", "", "tier",
                   pool.tiers[kind], "runtime", k->runtime, "template", k->tmpl);
    if (sb)
        limits_into(sb, &m->lim);
    rc = sb ? make_container(d, m, sb, err, errlen) : 1;
    json_decref(sb);
    if (rc == 0 && containers_ip(d, pool.wid, m->id, 5000, m->ip, sizeof(m->ip)) != 0) {
        char kerr[256];
        snprintf(err, errlen, "warm pool: %s has no address", m->id);
        containers_kill(d, pool.wid, m->id, kerr, sizeof(kerr));
        rc = 1;
    }
    return rc;
}

/* A claim's rename (warm_record_rename), before any refill: names are
 * what people read. 1 when there was one. mu held. */
static int rename_one(struct docker *d)
{
    char sbid[sizeof(pool.renames[0])];

    if (pool.n_renames == 0)
        return 0;
    snprintf(sbid, sizeof(sbid), "%s", pool.renames[0]);
    memmove(pool.renames[0], pool.renames[1], (size_t)--pool.n_renames * sizeof(pool.renames[0]));
    snprintf(pool.renaming, sizeof(pool.renaming), "%s", sbid);
    pthread_mutex_unlock(&pool.mu);
    warm_record_rename(d, pool.wid, sbid);
    pthread_mutex_lock(&pool.mu);
    pool.renaming[0] = '\0';
    pthread_cond_broadcast(&pool.renamed);
    return 1;
}

/* sbid is not renamed from now on: out of the queue, and a rename of it
 * under way has ended. dockerd left a container renamed while it was being
 * removed in "Removal In Progress" for good, without a name (seen in
 * make bench: a sandbox killed 100 ms after its claim). */
static void unrename(const char *sbid)
{
    pthread_mutex_lock(&pool.mu);
    for (int i = 0; i < pool.n_renames; i++)
        if (strcmp(pool.renames[i], sbid) == 0) {
            memmove(pool.renames[i], pool.renames[i + 1],
                    (size_t)(--pool.n_renames - i) * sizeof(pool.renames[0]));
            break;
        }
    while (strcmp(pool.renaming, sbid) == 0)
        pthread_cond_wait(&pool.renamed, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
}

/* A full pool's member made before its kind learned any limits is
 * removed (its refill is made with them), so that claims skip the update:
 * once per kind and start, never for limits that merely changed (claims
 * that ask for different ones would keep the pool churning). 1 when one
 * was. mu held. */
static int replace_stale(struct docker *d)
{
    char err[256];

    for (int i = 0; i < pool.n; i++) {
        struct member m = pool.ready[i];
        if (m.lim.set || !pool.learned[m.kind].set)
            continue;
        pool.ready[i] = pool.ready[--pool.n];
        pthread_mutex_unlock(&pool.mu);
        explicit_bzero(m.secret, sizeof(m.secret));
        if (containers_kill(d, pool.wid, m.id, err, sizeof(err)) != 0)
            log_warn("warm pool: removing %s: %s", m.id, err);
        pthread_mutex_lock(&pool.mu);
        return 1;
    }
    return 0;
}

/* One member made, at low priority: only while no cold create runs (a
 * burst the pool could not serve goes first). mu held. */
static void refill_one(struct docker *d)
{
    int kind = kind_to_fill(), rc;
    struct member m;
    char err[512];

    if (rename_one(d))
        return;
    if (kind < 0 && pool.cold == 0 && replace_stale(d))
        return;
    if (kind < 0 || pool.cold > 0) {
        clock_cond_wait_until(&pool.wake, &pool.mu,
                              clock_now_ms() + (kind < 0 ? 60000 : COLD_WAIT_MS));
        return;
    }
    m.lim = pool.learned[kind];
    pthread_mutex_unlock(&pool.mu);
    rc = make_member(d, kind, &m, err, sizeof(err));
    if (rc != 0)
        log_warn("warm pool: %s", err);
    pthread_mutex_lock(&pool.mu);
    if (rc != 0) /* perhaps the learned limits' fault (too little memory for envd) */
        pool.learned[kind].set = 0;
    if (rc == 0 && pool.n < MEMBERS_MAX)
        pool.ready[pool.n++] = m;
    else if (rc != 0 && !pool.stop)
        clock_cond_wait_until(&pool.wake, &pool.mu, clock_now_ms() + RETRY_MS);
}

static void *refill_main(void *arg)
{
    struct docker d = {0};

    (void)arg;
    if (docker_init(&d, pool.c->docker_socket) != 0)
        return NULL;
    warm_record_sweep(&d, pool.wid);
    pthread_mutex_lock(&pool.mu);
    while (!pool.stop)
        refill_one(&d);
    pthread_mutex_unlock(&pool.mu);
    docker_close(&d);
    return NULL;
}

static void set_tiers(const struct runtime *rts, int n_rts)
{
    for (int i = 0; i < pool.c->n_warm; i++) {
        pool.tiers[i][0] = '\0';
        for (int j = 0; j < n_rts; j++)
            if (strcmp(rts[j].name, pool.c->warm[i].runtime) == 0)
                snprintf(pool.tiers[i], sizeof(pool.tiers[i]), "%s", tier_name(rts[j].tier));
        if (!pool.tiers[i][0])
            log_warn("warm pool: runtime %s is not offered here; no warm %s on it",
                     pool.c->warm[i].runtime, pool.c->warm[i].tmpl);
    }
}

static int start_thread(const char *wid)
{
    snprintf(pool.wid, sizeof(pool.wid), "%s", wid);
    pool.stop = 0;
    pool.n = 0;
    pool.n_renames = 0; /* the old id's claims: gone with it */
    if (pthread_create(&pool.th, NULL, refill_main, NULL) != 0)
        return -1;
    pool.running = 1;
    return 0;
}

int warm_pool_start(const struct worker_conf *c, const struct host_caps *caps, const char *wid,
                    const struct runtime *rts, int n_rts)
{
    char err[256];

    pool.c = c;
    pool.caps = caps;
    /* Claims of a run that had a pool are found through their records. */
    if (warm_record_init(c->state_dir, err, sizeof(err)) != 0) {
        log_err("warm pool: %s", err);
        return -1;
    }
    if (c->n_warm == 0)
        return 0;
    set_tiers(rts, n_rts);
    return start_thread(wid);
}

void warm_pool_stop(void)
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

int warm_pool_restart(const char *wid)
{
    struct docker d = {0};
    char err[256];

    if (!pool.running)
        return 0;
    warm_pool_stop();
    if (docker_init(&d, pool.c->docker_socket) == 0) {
        for (int i = 0; i < pool.n; i++)
            containers_kill(&d, pool.wid, pool.ready[i].id, err, sizeof(err));
        docker_close(&d);
    }
    return start_thread(wid);
}

void warm_pool_cold(int begins)
{
    pthread_mutex_lock(&pool.mu);
    pool.cold += begins ? 1 : -1;
    if (pool.cold == 0)
        pthread_cond_signal(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
}

/* The kind create sb fits, or -1. */
static int fits(json_t *sb)
{
    const char *tmpl = json_string_value(json_object_get(sb, "template")) ?: "";
    const char *rt = json_string_value(json_object_get(sb, "runtime")) ?: "runc";
    const char *tier = json_string_value(json_object_get(sb, "tier")) ?: "";
    json_t *disk = json_object_get(sb, "disk_mb");

    if (json_object_get(sb, "image") || json_object_get(sb, "build") ||
        json_object_get(sb, "start") || json_is_object(json_object_get(sb, "egress")) ||
        json_array_size(json_object_get(sb, "volumes")) > 0)
        return -1;
    if (pool.caps->disk_quota && json_integer_value(disk) > 0 &&
        json_integer_value(disk) != SANDBOX_DISK_MB_DEFAULT)
        return -1;
    for (int i = 0; i < pool.c->n_warm; i++)
        if (!strcmp(pool.c->warm[i].tmpl, tmpl) && !strcmp(pool.c->warm[i].runtime, rt) &&
            !strcmp(pool.tiers[i], tier))
            return i;
    return -1;
}

/* A ready member of kind, one made with limits want first: it needs no
 * update at its claim. */
static int pop(int kind, const struct wlimits *want, struct member *m)
{
    int found = -1;

    pthread_mutex_lock(&pool.mu);
    for (int i = pool.n - 1; i >= 0; i--)
        if (pool.ready[i].kind == kind && (found < 0 || limits_same(&pool.ready[i].lim, want)))
            found = i;
    if (found >= 0) {
        *m = pool.ready[found];
        pool.ready[found] = pool.ready[--pool.n];
        pool.learned[kind] = *want; /* before the refill this wakes starts */
    }
    pthread_cond_signal(&pool.wake); /* to refill (once no cold create runs) */
    pthread_mutex_unlock(&pool.mu);
    return found >= 0;
}

/* After claim sbid: it is renamed in the background. */
static void claimed(const char *sbid)
{
    pthread_mutex_lock(&pool.mu);
    if (pool.n_renames < RENAMES_MAX)
        snprintf(pool.renames[pool.n_renames++], sizeof(pool.renames[0]), "%s", sbid);
    else
        log_sandbox("warn", sbid, NULL, "warm sandbox: renamed at workerd's next start");
    pthread_cond_signal(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
}

int warm_pool_claim(struct docker *d, const char *wid, json_t *sb, struct ctr_state *st)
{
    int kind, rc;
    struct member m;
    struct wlimits want;

    if (!pool.running || (kind = fits(sb)) < 0)
        return 2;
    if ((rc = containers_running(d, wid, st->sbid)) != 2) /* a create delivered again */
        return rc < 0 ? -1 : 2;
    want = limits_of(sb);
    while (pop(kind, &want, &m)) {
        struct warm_claim c = {m.id, m.ctr, m.secret, m.ip, limits_same(&m.lim, &want)};
        rc = warm_record_bind(d, wid, sb, &c, st);
        explicit_bzero(m.secret, sizeof(m.secret));
        if (rc == 0)
            claimed(st->sbid);
        if (rc <= 0)
            return rc;
    }
    return 2;
}

int warm_pool_reinit(struct docker *d, const char *wid, const char *sbid)
{
    return warm_record_reinit(d, wid, sbid);
}

int warm_pool_forget(struct docker *d, const char *wid, const char *sbid)
{
    if (sbid)
        unrename(sbid);
    return warm_record_forget(d, wid, sbid);
}

json_t *warm_pool_view(void)
{
    json_t *arr = json_array();

    if (!pool.c)
        return arr;
    pthread_mutex_lock(&pool.mu);
    for (int i = 0; i < pool.c->n_warm; i++)
        json_array_append_new(arr,
                              json_pack("{s:s, s:s, s:i, s:i}", "template", pool.c->warm[i].tmpl,
                                        "runtime", pool.c->warm[i].runtime, "size",
                                        pool.c->warm[i].size, "ready", count_kind(i)));
    pthread_mutex_unlock(&pool.mu);
    return arr;
}
