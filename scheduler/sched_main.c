/* corral-sched: what no request drives. Expires workers whose lease ran out,
 * kills sandboxes whose timeout passed, reclaims abandoned creates and slots.
 * Safe to run as several copies: every action is claimed by a script first. */
#include "accounts.h"
#include "audit.h"
#include "clock.h"
#include "corral_conf.h"
#include "lifecycle.h"
#include "log.h"
#include "pause.h"
#include "stop_signals.h"
#include "worker_store.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

/* Liveness is judged only on time the store could be reached (issue 34): a
 * worker whose heartbeats were refused because Redis was down or failing
 * over is not dead. So after any sweep that could not reach the store, and at
 * start (this process has not watched the store until now), no worker is
 * declared dead until a full lease has passed with the store up: every live
 * worker renews in that time. A worker that truly stopped is declared dead
 * one lease later than it would have been. */
static long long grace_until_ms;

static void store_unreachable(long lease_ms)
{
    if (clock_now_ms() >= grace_until_ms)
        log_warn("the store is unreachable: no worker is judged dead until a lease (%ld ms) has "
                 "passed with it reachable",
                 lease_ms);
    grace_until_ms = clock_now_ms() + lease_ms;
}

static int in_grace(void)
{
    return clock_now_ms() < grace_until_ms;
}

/* One pool's dead workers, or, in the grace, only a look at its leases: the
 * look is what tells whether the store (the node of this pool, on a cluster)
 * is still unreachable, so the grace lasts a lease past the last failure. */
static void judge_pool(struct rconn *rc, const struct sched_conf *c, const char *pool,
                       long lease_ms)
{
    struct worker_ids ids;

    if (!in_grace()) {
        if (sweep_dead_workers(rc, c, pool) < 0)
            store_unreachable(lease_ms);
        return;
    }
    if (worker_expired(rc, pool, (long long)clock_now_ms(), &ids) != 0) {
        store_unreachable(lease_ms);
        return;
    }
    worker_ids_free(&ids);
}

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static void sweep_once(struct rconn *rc, const struct sched_conf *c, long tick, long lease_ms)
{
    struct id_list ws;

    if (workspace_ids(rc, &ws) != 0) {
        store_unreachable(lease_ms);
        return;
    }
    judge_pool(rc, c, "", lease_ms);
    if (tick % 10 == 0)
        sweep_worker_slots(rc, "", 30000);
    /* Appends trim as they go; this trims the streams nothing is appended to. */
    if (tick % 60 == 0)
        audit_trim(rc, "");
    for (size_t i = 0; i < ws.n; i++) {
        const char *id = ws.id[i];
        /* Whatever this workspace's sweeps log is about it. */
        log_ctx_set(LOG_WORKSPACE, id);
        judge_pool(rc, c, id, lease_ms);
        sweep_timeouts(rc, c, id);
        sweep_abandoned_creates(rc, id);
        sweep_abandoned_waits(rc, id);
        if (tick % 10 == 0)
            sweep_worker_slots(rc, id, 30000);
        if (tick % 60 == 0)
            audit_trim(rc, id);
    }
    log_ctx_clear();
    id_list_free(&ws);
}

int main(int argc, char **argv)
{
    struct corral_conf conf;
    struct rconn rc;
    struct sched_conf sc;
    char err[512];
    const char *path = "/etc/corral/corral.conf";
    int opt;

    while ((opt = getopt(argc, argv, "c:")) != -1) {
        if (opt != 'c') {
            fprintf(stderr, "usage: corral-sched [-c corral.conf]\n");
            return 2;
        }
        path = optarg;
    }
    log_set_name("corral-sched");
    if (corral_conf_load(path, &conf, err, sizeof(err)) != 0) {
        log_err("config: %s", err);
        return 1;
    }
    /* SA_RESTART: a Redis call the signal lands in finishes; the loop then stops. */
    if (stop_signals_install(on_signal, 1) != 0) {
        log_err("sigaction: %s", strerror(errno));
        return 1;
    }
    sched_conf_init(&sc, &conf);
    corral_conf_rconn(&conf, &rc);
    log_info("sweeping every %ld ms", conf.sweep_ms);
    store_unreachable(conf.lease_ms);
    for (long tick = 0; !stopping; tick++) {
        sweep_once(&rc, &sc, tick, conf.lease_ms);
        clock_sleep_ms(conf.sweep_ms);
    }
    rconn_close(&rc);
    log_info("stopped");
    return 0;
}
