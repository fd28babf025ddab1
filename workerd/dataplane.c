/* dataplane.c: the data port's two hooks.
 *
 * The key changes at every handshake, so it is read under a lock on every
 * request. A sandbox's address comes from the Engine API (its container's IP on
 * its network), cached for a few seconds: a data-plane request must not cost a
 * dockerd round trip each time, and a container keeps its address while it runs.
 * The data port's threads each get their own dockerd connection. */
#include "dataplane.h"

#include "clock.h"
#include "containers.h"
#include "dataport.h"
#include "docker_api.h"
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CACHE_SLOTS 256
#define CACHE_TTL_MS 5000

struct cached {
    char sbid[CTR_ID_MAX];
    char ip[64];
    int64_t until;
};

static struct {
    pthread_mutex_t mu;
    char wid[CTR_ID_MAX];
    char key[128];
    char sock[256];
    struct cached cache[CACHE_SLOTS];
} dp = {.mu = PTHREAD_MUTEX_INITIALIZER};

static __thread struct docker thread_docker;
static __thread int thread_docker_ready;

void dataplane_set_identity(const char *worker_id, const char *data_key)
{
    pthread_mutex_lock(&dp.mu);
    snprintf(dp.wid, sizeof(dp.wid), "%s", worker_id);
    snprintf(dp.key, sizeof(dp.key), "%s", data_key ? data_key : "");
    memset(dp.cache, 0, sizeof(dp.cache));
    pthread_mutex_unlock(&dp.mu);
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

/* The running container's IP from GET /containers/{name}/json. */
static int inspect_ip(const char *sbid, const char *wid, char *ip, size_t len)
{
    char path[256], err[256];
    json_t *ans = NULL, *nets, *net;
    const char *name, *addr = NULL;
    long status = 0;

    if (!thread_docker_ready) {
        if (docker_init(&thread_docker, dp.sock) != 0)
            return -1;
        thread_docker_ready = 1;
    }
    snprintf(path, sizeof(path), "/containers/corral-%s-%s/json", sbid, wid);
    if (docker_call(&thread_docker, "GET", path, NULL, 2000, &status, &ans, err, sizeof(err)) !=
            0 ||
        status != 200 || !json_is_true(json_object_get(json_object_get(ans, "State"), "Running"))) {
        json_decref(ans);
        return -1;
    }
    nets = json_object_get(json_object_get(ans, "NetworkSettings"), "Networks");
    json_object_foreach(nets, name, net)
    {
        const char *a = json_string_value(json_object_get(net, "IPAddress"));
        if (a && *a) {
            addr = a;
            break;
        }
    }
    if (addr)
        snprintf(ip, len, "%s", addr);
    json_decref(ans);
    return addr ? 0 : -1;
}

static int resolve(void *ud, const char *sbid, char *ip, size_t len)
{
    char wid[CTR_ID_MAX];
    struct cached *c;
    int64_t now = clock_now_ms();

    (void)ud;
    if (!containers_id_ok(sbid))
        return -1;
    pthread_mutex_lock(&dp.mu);
    c = &dp.cache[slot_of(sbid)];
    if (strcmp(c->sbid, sbid) == 0 && c->until > now) {
        snprintf(ip, len, "%s", c->ip);
        pthread_mutex_unlock(&dp.mu);
        return 0;
    }
    snprintf(wid, sizeof(wid), "%s", dp.wid);
    pthread_mutex_unlock(&dp.mu);
    if (!wid[0] || inspect_ip(sbid, wid, ip, len) != 0)
        return -1;
    pthread_mutex_lock(&dp.mu);
    snprintf(c->sbid, sizeof(c->sbid), "%s", sbid);
    snprintf(c->ip, sizeof(c->ip), "%s", ip);
    c->until = now + CACHE_TTL_MS;
    pthread_mutex_unlock(&dp.mu);
    return 0;
}

int dataplane_start(const struct worker_conf *conf)
{
    struct dataport_hooks hooks = {.ud = NULL, .worker_key = worker_key, .resolve = resolve};

    snprintf(dp.sock, sizeof(dp.sock), "%s", conf->docker_socket);
    if (dataport_start(conf->data_addr, &hooks) != 0) {
        log_err("data port: cannot listen on %s", conf->data_addr);
        return -1;
    }
    log_info("data port listening on %s", conf->data_addr);
    return 0;
}
