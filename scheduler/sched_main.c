/* corral-sched: what no request drives. Expires workers whose lease ran out,
 * kills sandboxes whose timeout passed, reclaims abandoned creates and slots.
 * Safe to run as several copies: every action is claimed by a script first. */
#include "audit.h"
#include "clock.h"
#include "corral_conf.h"
#include "keys.h"
#include "lifecycle.h"
#include "log.h"
#include "pause.h"
#include "stop_signals.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static void sweep_once(struct rconn *rc, const struct sched_conf *c, long tick)
{
    redisReply *ws = rconn_cmd(rc, 0, "SMEMBERS " K_WORKSPACES);

    if (!ws)
        return;
    sweep_dead_workers(rc, c, "");
    if (tick % 10 == 0)
        sweep_worker_slots(rc, "", 30000);
    /* Appends trim as they go; this trims the streams nothing is appended to. */
    if (tick % 60 == 0)
        audit_trim(rc, "");
    for (size_t i = 0; i < ws->elements; i++) {
        const char *id = ws->element[i]->str;
        /* Whatever this workspace's sweeps log is about it. */
        log_ctx_set(LOG_WORKSPACE, id);
        sweep_dead_workers(rc, c, id);
        sweep_timeouts(rc, c, id);
        sweep_abandoned_creates(rc, id);
        sweep_abandoned_waits(rc, id);
        if (tick % 10 == 0)
            sweep_worker_slots(rc, id, 30000);
        if (tick % 60 == 0)
            audit_trim(rc, id);
    }
    log_ctx_clear();
    freeReplyObject(ws);
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
    for (long tick = 0; !stopping; tick++) {
        sweep_once(&rc, &sc, tick);
        clock_sleep_ms(conf.sweep_ms);
    }
    rconn_close(&rc);
    log_info("stopped");
    return 0;
}
