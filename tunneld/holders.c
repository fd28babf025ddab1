#include "holders.h"

#include "clock.h"
#include "log.h"
#include "tunnel_store.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static struct holder *slots;
static size_t nslots;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
/* one connection to the store for every thread: the calls are rare */
static pthread_mutex_t store_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rconn *store;

int holders_init(const char *ip, unsigned lo, unsigned hi, struct rconn *rc)
{
    const char *fmt = strchr(ip, ':') ? "[%s]:%u" : "%s:%u";

    nslots = hi - lo + 1;
    slots = calloc(nslots, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < nslots; i++) {
        snprintf(slots[i].addr, sizeof(slots[i].addr), fmt, ip, lo + (unsigned)i);
        slots[i].stop_fd = -1;
    }
    store = rc;
    return 0;
}

static void stop_slot(struct holder *h)
{
    uint64_t one = 1;

    if (h->stop_fd >= 0 && write(h->stop_fd, &one, sizeof(one)) < 0)
        log_warn("tunnel of worker %s: cannot signal its end", h->worker);
}

static long find(const char *worker, int in_use, const unsigned char *skip)
{
    for (size_t i = 0; i < nslots; i++)
        if (slots[i].in_use == in_use && !(skip && skip[i]) &&
            strcmp(in_use ? slots[i].worker : slots[i].last_worker, worker) == 0)
            return (long)i;
    return -1;
}

/* The worker's old tunnel ended, waiting for its thread to give the slot
 * back. 0, or -1 after 5 s. */
static int end_old(const char *worker)
{
    long i = find(worker, 1, NULL);
    struct timespec until;

    if (i < 0)
        return 0;
    log_info("tunnel of worker %s: a newer one arrived, the old one is ended", worker);
    stop_slot(&slots[i]);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    while (slots[i].in_use && strcmp(slots[i].worker, worker) == 0)
        if (pthread_cond_timedwait(&freed, &mu, &until) != 0)
            return -1;
    return 0;
}

static long free_slot(const char *worker, const unsigned char *skip)
{
    long i = find(worker, 0, skip);

    for (size_t k = 0; i < 0 && k < nslots; k++) /* one nobody held first */
        if (!slots[k].in_use && !slots[k].last_worker[0] && !skip[k])
            i = (long)k;
    for (size_t k = 0; i < 0 && k < nslots; k++)
        if (!slots[k].in_use && !skip[k])
            i = (long)k;
    return i;
}

size_t holders_count(void)
{
    return nslots;
}

int holders_take(const char *worker, const char *pool, const unsigned char *skip)
{
    long i = -1;
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

    if (efd < 0)
        return -1;
    pthread_mutex_lock(&mu);
    if (end_old(worker) == 0 && (i = free_slot(worker, skip)) >= 0) {
        struct holder *h = &slots[i];
        h->in_use = 1;
        h->recorded = 0;
        h->stop_fd = efd;
        snprintf(h->worker, sizeof(h->worker), "%s", worker);
        snprintf(h->pool, sizeof(h->pool), "%s", pool);
        snprintf(h->last_worker, sizeof(h->last_worker), "%s", worker);
    }
    pthread_mutex_unlock(&mu);
    if (i < 0)
        close(efd);
    return (int)i;
}

void holders_get(int i, struct holder *out)
{
    pthread_mutex_lock(&mu);
    *out = slots[i];
    pthread_mutex_unlock(&mu);
}

void holders_record(int i)
{
    struct holder h;
    int rc;

    holders_get(i, &h);
    pthread_mutex_lock(&store_mu);
    rc = tunnel_record_set(store, h.pool, h.worker, h.addr, TUNNEL_RECORD_TTL_MS);
    pthread_mutex_unlock(&store_mu);
    if (rc != 0)
        log_warn("tunnel of worker %s: its record could not be written; retried", h.worker);
    pthread_mutex_lock(&mu);
    slots[i].recorded = rc == 0;
    pthread_mutex_unlock(&mu);
}

void holders_put(int i)
{
    struct holder h;

    holders_get(i, &h);
    pthread_mutex_lock(&store_mu);
    if (tunnel_record_release(store, h.pool, h.worker, h.addr) != 0)
        log_warn("tunnel of worker %s: its record could not be deleted; it expires", h.worker);
    pthread_mutex_unlock(&store_mu);
    pthread_mutex_lock(&mu);
    close(slots[i].stop_fd);
    slots[i].stop_fd = -1;
    slots[i].in_use = 0;
    slots[i].worker[0] = '\0';
    pthread_cond_broadcast(&freed);
    pthread_mutex_unlock(&mu);
}

/* One slot's renewal: a record another host took ends the tunnel here; one
 * never written is written again; an unreachable store ends nothing. */
static void renew_one(size_t i)
{
    struct holder h;
    int rc;

    holders_get((int)i, &h);
    if (!h.in_use)
        return;
    if (!h.recorded) {
        holders_record((int)i);
        return;
    }
    pthread_mutex_lock(&store_mu);
    rc = tunnel_record_renew(store, h.pool, h.worker, h.addr, TUNNEL_RECORD_TTL_MS);
    pthread_mutex_unlock(&store_mu);
    if (rc != 0)
        return;
    log_info("tunnel of worker %s: its record names another gateway host now; ended here",
             h.worker);
    pthread_mutex_lock(&mu);
    if (slots[i].in_use && strcmp(slots[i].worker, h.worker) == 0)
        stop_slot(&slots[i]);
    pthread_mutex_unlock(&mu);
}

void holders_stop_all(void)
{
    struct timespec until;
    int busy = 1;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 3;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nslots; i++)
        if (slots[i].in_use)
            stop_slot(&slots[i]);
    while (busy) {
        busy = 0;
        for (size_t i = 0; i < nslots; i++)
            busy |= slots[i].in_use;
        if (busy && pthread_cond_timedwait(&freed, &mu, &until) != 0)
            break;
    }
    pthread_mutex_unlock(&mu);
}

static void *renewal_main(void *arg)
{
    (void)arg;
    for (;;) {
        clock_sleep_ms(TUNNEL_RENEW_MS);
        for (size_t i = 0; i < nslots; i++)
            renew_one(i);
    }
    return NULL;
}

int holders_start_renewal(void)
{
    pthread_t t;

    if (pthread_create(&t, NULL, renewal_main, NULL) != 0)
        return -1;
    pthread_detach(t);
    return 0;
}
