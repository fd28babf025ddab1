/* dataplane.c: the data port's two hooks.
 *
 * The key changes at every handshake, so it is read under a lock on every
 * request. A sandbox's address comes from the Engine API (its container's IP on
 * its network), cached for a few seconds: a data-plane request must not cost a
 * dockerd round trip each time, and a container keeps its address while it runs.
 * Lookups share a few dockerd connections, lent out under the lock: a
 * connection per data-port thread was never closed when its thread ended, and
 * leaked a socket pair and a dockerd connection per client connection.
 * In agent mode (decision 0054) a sandbox is a session's own loopback
 * address, known without asking anyone: no cache, no dockerd; and only
 * envd's port and the exposed ones are connected to, from that address
 * (decision 0062). A third hook takes volume file requests (decision 0071)
 * to volume_serve.c, with the volume's directory asked of dockerd here. */
#include "dataplane.h"

#include "agent.h"
#include "clock.h"
#include "containers.h"
#include "dataport.h"
#include "docker_api.h"
#include "log.h"
#include "volume_serve.h"
#include "volumes.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CACHE_SLOTS 256
#define CACHE_TTL_MS 5000
/* Sandboxes being killed, most recent last; an id never comes back, so the
 * ring only has to outlast a container's removal by far. */
#define BARRED_SLOTS 1024

struct cached {
    char sbid[CTR_ID_MAX];
    char ip[64];
    int64_t until;
};

static struct {
    pthread_mutex_t mu;
    char wid[CTR_ID_MAX];
    char key[128];
    char prev_key[128]; /* accepted until prev_until */
    int64_t prev_until;
    char sock[256];
    int agent; /* sessions, not containers */
    const struct agent_conf *agent_conf;
    struct cached cache[CACHE_SLOTS];
    char barred[BARRED_SLOTS][CTR_ID_MAX];
    unsigned n_barred;
} dp = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* More lookups at once than this wait: each is one short call, cached after. */
#define DOCKER_HANDLES 4

static struct {
    pthread_mutex_t mu;
    pthread_cond_t freed;
    struct docker h[DOCKER_HANDLES];
    int ready[DOCKER_HANDLES], busy[DOCKER_HANDLES];
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .freed = PTHREAD_COND_INITIALIZER};

static struct docker *docker_borrow(void)
{
    struct docker *d;
    int i;

    pthread_mutex_lock(&pool.mu);
    for (;;) {
        for (i = 0; i < DOCKER_HANDLES && pool.busy[i]; i++)
            ;
        if (i < DOCKER_HANDLES)
            break;
        pthread_cond_wait(&pool.freed, &pool.mu);
    }
    if (!pool.ready[i] && docker_init(&pool.h[i], dp.sock) == 0)
        pool.ready[i] = 1;
    pool.busy[i] = pool.ready[i];
    d = pool.ready[i] ? &pool.h[i] : NULL;
    pthread_mutex_unlock(&pool.mu);
    return d;
}

static void docker_return(struct docker *d)
{
    pthread_mutex_lock(&pool.mu);
    pool.busy[d - pool.h] = 0;
    pthread_cond_signal(&pool.freed);
    pthread_mutex_unlock(&pool.mu);
}

void dataplane_set_identity(const char *worker_id, const char *data_key, const char *prev_key,
                            long prev_valid_ms)
{
    pthread_mutex_lock(&dp.mu);
    snprintf(dp.wid, sizeof(dp.wid), "%s", worker_id);
    snprintf(dp.key, sizeof(dp.key), "%s", data_key ? data_key : "");
    snprintf(dp.prev_key, sizeof(dp.prev_key), "%s", prev_key ? prev_key : "");
    dp.prev_until = prev_key && *prev_key ? clock_now_ms() + prev_valid_ms : 0;
    memset(dp.cache, 0, sizeof(dp.cache));
    pthread_mutex_unlock(&dp.mu);
}

static int previous_key(void *ud, char *out, size_t len)
{
    int ok;

    (void)ud;
    pthread_mutex_lock(&dp.mu);
    ok = dp.prev_key[0] != '\0' && clock_now_ms() < dp.prev_until;
    snprintf(out, len, "%s", ok ? dp.prev_key : "");
    pthread_mutex_unlock(&dp.mu);
    return ok ? 0 : -1;
}

static int worker_key(void *ud, char *out, size_t len)
{
    int ok;

    (void)ud;
    pthread_mutex_lock(&dp.mu);
    ok = dp.key[0] != '\0';
    snprintf(out, len, "%s", dp.key);
    pthread_mutex_unlock(&dp.mu);
    return ok ? 0 : -1;
}

static unsigned slot_of(const char *sbid)
{
    unsigned h = 5381;

    for (; *sbid; sbid++)
        h = h * 33 + (unsigned char)*sbid;
    return h % CACHE_SLOTS;
}

/* The running container's address, on a connection of the pool; a short
 * timeout, as a client is waiting. */
static int inspect_ip(const char *sbid, const char *wid, char *ip, size_t len)
{
    struct docker *d = docker_borrow();
    int rc;

    if (!d)
        return -1;
    rc = containers_ip(d, wid, sbid, 2000, ip, len);
    docker_return(d);
    return rc;
}

/* Under dp.mu. */
static int is_barred(const char *sbid)
{
    for (unsigned i = 0; i < BARRED_SLOTS && i < dp.n_barred; i++)
        if (strcmp(dp.barred[i], sbid) == 0)
            return 1;
    return 0;
}

/* The event loop's question: answered from the cache alone. */
static int resolve_cached(void *ud, const char *sbid, char *ip, size_t len)
{
    struct cached *c;
    int rc = -1, barred;

    (void)ud;
    if (!containers_id_ok(sbid))
        return -1;
    if (dp.agent) { /* no cache: a session being killed is refused here */
        pthread_mutex_lock(&dp.mu);
        barred = is_barred(sbid);
        pthread_mutex_unlock(&dp.mu);
        return barred ? -1 : agent_addr(sbid, ip, len);
    }
    /* A barred id is never in the cache (dataplane_bar clears it, resolve
     * does not cache one): a hit needs no look at the ring, which every
     * request would otherwise pay for. */
    pthread_mutex_lock(&dp.mu);
    c = &dp.cache[slot_of(sbid)];
    if (strcmp(c->sbid, sbid) == 0 && c->until > clock_now_ms()) {
        snprintf(ip, len, "%s", c->ip);
        rc = 0;
    }
    pthread_mutex_unlock(&dp.mu);
    return rc;
}

static int resolve(void *ud, const char *sbid, char *ip, size_t len)
{
    char wid[CTR_ID_MAX];
    struct cached *c;
    int64_t now = clock_now_ms();

    if (resolve_cached(ud, sbid, ip, len) == 0)
        return 0;
    if (dp.agent || !containers_id_ok(sbid))
        return -1;
    pthread_mutex_lock(&dp.mu);
    c = &dp.cache[slot_of(sbid)];
    snprintf(wid, sizeof(wid), "%s", dp.wid);
    pthread_mutex_unlock(&dp.mu);
    if (!wid[0] || inspect_ip(sbid, wid, ip, len) != 0)
        return -1;
    pthread_mutex_lock(&dp.mu);
    /* Barred while dockerd answered: its container is on its way out. */
    if (is_barred(sbid)) {
        pthread_mutex_unlock(&dp.mu);
        return -1;
    }
    snprintf(c->sbid, sizeof(c->sbid), "%s", sbid);
    snprintf(c->ip, sizeof(c->ip), "%s", ip);
    c->until = now + CACHE_TTL_MS;
    pthread_mutex_unlock(&dp.mu);
    return 0;
}

/* Under dp.mu. */
static void forget_locked(const char *sbid)
{
    struct cached *c = &dp.cache[slot_of(sbid)];

    if (strcmp(c->sbid, sbid) == 0)
        memset(c, 0, sizeof(*c));
}

void dataplane_forget(const char *sbid)
{
    pthread_mutex_lock(&dp.mu);
    forget_locked(sbid);
    pthread_mutex_unlock(&dp.mu);
}

void dataplane_bar(const char *sbid)
{
    pthread_mutex_lock(&dp.mu); /* barred and uncached at once: no hit in between */
    if (!is_barred(sbid))
        snprintf(dp.barred[dp.n_barred++ % BARRED_SLOTS], CTR_ID_MAX, "%s", sbid);
    forget_locked(sbid);
    pthread_mutex_unlock(&dp.mu);
}

/* Where a volume's files are, for the volume file API (decision 0071): its
 * Docker volume checked as the workspace's on this worker, made if it is
 * not yet, on a connection of the pool. */
static int volume_root(void *ud, const char *dname, const char *ws, char *dir, size_t len,
                       char *why, size_t whylen)
{
    char wid[CTR_ID_MAX];
    struct docker *d;
    int rc;

    (void)ud;
    pthread_mutex_lock(&dp.mu);
    snprintf(wid, sizeof(wid), "%s", dp.wid);
    pthread_mutex_unlock(&dp.mu);
    if (!wid[0]) {
        snprintf(why, whylen, "worker starting (not enrolled yet); retry shortly");
        return 503;
    }
    if (!(d = docker_borrow())) {
        snprintf(why, whylen, "dockerd unreachable");
        return 503;
    }
    rc = volumes_mountpoint(d, wid, ws, dname, dir, len, why, whylen);
    docker_return(d);
    return rc == 0 ? 0 : rc == 1 ? 403 : 503;
}

static void volume(void *ud, int fd, const struct dataport_head *h, const char *in, size_t len)
{
    volume_serve_start(fd, h, in, len, volume_root, ud);
}

/* An agent session's ports (decision 0062): envd's and those the person
 * exposed, nothing else of the machine. */
static int agent_port(void *ud, const char *sbid, unsigned port)
{
    (void)ud;
    (void)sbid;
    return agent_port_exposed(dp.agent_conf, port);
}

int dataplane_start(const struct worker_conf *conf)
{
    struct dataport_hooks hooks = {.ud = NULL,
                                   .worker_key = worker_key,
                                   .previous_key = previous_key,
                                   .resolve = resolve,
                                   .resolve_cached = resolve_cached,
                                   .volume = volume};

    snprintf(dp.sock, sizeof(dp.sock), "%s", conf->docker_socket);
    dp.agent = conf->agent.on;
    dp.agent_conf = &conf->agent;
    if (dp.agent) {
        /* A session's address is on this machine's loopback: only some
         * ports, and never from 127.0.0.1 (the caller is not local). */
        hooks.port_allowed = agent_port;
        hooks.from_sandbox_addr = 1;
        hooks.volume = NULL; /* no dockerd, no volumes */
    }
    if (dataport_start(conf->data_addr, &hooks) != 0) {
        log_err("data port: cannot listen on %s", conf->data_addr);
        return -1;
    }
    log_info("data port listening on %s", conf->data_addr);
    return 0;
}
