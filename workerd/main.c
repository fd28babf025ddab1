/* main.c: workerd. Parses configuration, checks dockerd, probes runtimes,
 * enrols, then runs the heartbeat loop (main thread) and the event follower.
 *
 *   workerd [-c /etc/corral/workerd.conf] [--KEY=VALUE | --KEY VALUE ...]
 *
 * Every config key can be given as a flag (dashes or underscores), applied
 * after the file; without -c and without the default file, the flags alone.
 * Refuses to start, naming the cause, on a bad config, a missing or
 * group/world-readable join token file, or a dockerd that does not answer.
 * SIGTERM/SIGINT: the poll in flight finishes, then workerd exits without
 * touching its sandboxes (-mode agent: its sessions end with it, decision
 * 0054). */
#include "agent.h"
#include "dataplane.h"
#include "worker.h"
#include "egress_dir.h"
#include "egress_pool.h"
#include "egress_resolver.h"
#include "warm_pool.h"
#include "stopped.h"
#include "subvol_drop.h"
#include "tunnel_client.h"

#include "config.h"
#include "log.h"
#include "stop_signals.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CONF "/etc/corral/workerd.conf"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: workerd [-c FILE] [--KEY=VALUE ...]   (keys: see conf/workerd.conf)\n");
}

/* "--join-token-file=x" or "--join-token-file x" -> wconf_set("join_token_file", "x"). */
static int apply_flag(struct worker_conf *c, int argc, char **argv, int *i, char *err,
                      size_t errlen)
{
    char key[128], *eq;
    const char *arg = argv[*i] + (argv[*i][1] == '-' ? 2 : 1), *value;
    size_t klen;

    eq = strchr(arg, '=');
    klen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (klen == 0 || klen >= sizeof(key)) {
        snprintf(err, errlen, "%s: bad flag", argv[*i]);
        return -1;
    }
    memcpy(key, arg, klen);
    key[klen] = '\0';
    for (char *p = key; *p; p++)
        if (*p == '-')
            *p = '_';
    if (eq) {
        value = eq + 1;
    } else if (*i + 1 < argc) {
        value = argv[++*i];
    } else {
        snprintf(err, errlen, "--%s: needs a value", key);
        return -1;
    }
    if (wconf_set(c, key, value, err, errlen) != 0) {
        char why[256];
        snprintf(why, sizeof(why), "%s", err);
        snprintf(err, errlen, "--%s: %s", key, why);
        return -1;
    }
    return 0;
}

/* The config file first, then the flags, so flags override it. */
/* The config's canonical path, for the gate's hardlocks; as given if it
 * cannot be resolved or is too long to keep. */
static void set_conf_file(struct worker_conf *c, const char *path)
{
    char real[PATH_MAX];
    const char *p = realpath(path, real) ? real : path;

    if (snprintf(c->agent.conf_file, sizeof(c->agent.conf_file), "%s", p) >=
        (int)sizeof(c->agent.conf_file))
        snprintf(c->agent.conf_file, sizeof(c->agent.conf_file), "%s", path);
}

/* The -c file; without one, /etc/corral/workerd.conf when it exists, else
 * NULL: the flags say everything (a person's laptop in agent mode,
 * README.md). A -c file must exist. */
static const char *conf_path(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-c") == 0)
            return argv[i + 1];
    return access(DEFAULT_CONF, F_OK) == 0 ? DEFAULT_CONF : NULL;
}

static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    return 0;
}

static int load_conf(struct worker_conf *c, int argc, char **argv, char *err, size_t errlen)
{
    const char *path = conf_path(argc, argv);

    wconf_defaults(c);
    if (wants_help(argc, argv))
        return usage(), -2;
    if (path) {
        if (config_load(path, wconf_set, c, err, errlen) != 0)
            return -1;
        /* Hardlocked by the gate of every agent session (it holds the token's path). */
        set_conf_file(c, path);
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0) {
            i++;
        } else if (argv[i][0] != '-') {
            snprintf(err, errlen, "%s: unexpected argument", argv[i]);
            return -1;
        } else if (apply_flag(c, argc, argv, &i, err, errlen) != 0) {
            return -1;
        }
    }
    return wconf_finish(c, err, errlen);
}

/* An agent needs no dockerd: its one runtime is this machine (decision 0054). */
static int prepare_agent(struct worker *w, char *err, size_t errlen)
{
    const struct worker_conf *c = w->conf;

    w->n_rts = 1;
    snprintf(w->rts[0].name, sizeof(w->rts[0].name), AGENT_RUNTIME);
    w->rts[0].tier = c->agent.os_sandbox[0] ? TIER_CONTAINER : TIER_NONE;
    if (agent_sessions_init(c, err, errlen) != 0)
        return -1;
    if (dataplane_start(c) != 0) {
        snprintf(err, errlen, "data_addr %s: cannot listen", c->data_addr);
        return -1;
    }
    return 0;
}

/* Everything that must hold before we enrol: dockerd, state dir, runtimes. */
static int prepare(struct worker *w, char *err, size_t errlen)
{
    const struct worker_conf *c = w->conf;
    char why[512];
    int rc;

    if (docker_init(&w->dk, c->docker_socket) != 0 || control_init(&w->ctl, c) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!c->agent.on && docker_ping(&w->dk, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "dockerd at %s does not answer (%s)", c->docker_socket, why);
        return -1;
    }
    if (state_dir_prepare(c->state_dir, err, errlen) != 0)
        return -1;
    rc = state_load(c->state_dir, &w->id, err, errlen);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        log_ctx_set_process(LOG_WORKER, w->id.worker_id);
        log_info("identity found: worker %s", w->id.worker_id);
    }
    if (c->agent.on)
        return prepare_agent(w, err, errlen);
    /* Sandboxes paused without memory are told paused from the first listing on. */
    if (stopped_load(c->state_dir, err, errlen) != 0)
        return -1;
    if (rc == 1)
        stopped_prune(&w->dk, w->id.worker_id);
    if (probe_runtimes(&w->dk, c, w->rts, &w->n_rts, err, errlen) != 0)
        return -1;
    if (hostcaps_init(w, err, errlen) != 0)
        return -1;
    subvol_drop_init(&w->dk, (int)c->fast_remove);
    if (dataplane_start(c) != 0) {
        snprintf(err, errlen, "data_addr %s: cannot listen", c->data_addr);
        return -1;
    }
    return 0;
}

static void release(struct worker *w)
{
    docker_close(&w->dk);
    control_close(&w->ctl);
    json_decref(w->acks);
    json_decref(w->backlog);
    json_decref(w->arrived);
    json_decref(w->snap_reports);
    json_decref(w->killed);
    sbtable_free(&w->table);
}

/* Beside the heartbeat loop, a Docker worker follows dockerd's events and
 * samples its containers, and keeps egress proxies ready. */
static void start_docker_threads(struct worker *w, pthread_t *ev, pthread_t *tele, int *started,
                                 int *tele_started)
{
    const struct worker_conf *conf = w->conf;

    char root[WCONF_STR + 16];

    egress_dir_root(conf, root, sizeof(root));
    if (w->caps.egress && egress_resolver_start(w, root) != 0)
        log_warn("egress resolver did not start: rules with placeholders refuse their requests");
    if (w->caps.egress && egress_pool_start(conf, w->id.worker_id, (int)conf->egress_pool) != 0)
        log_warn("egress pool did not start: every proxy is made when its sandbox is");
    if (w->caps.walled && warm_pool_start(conf, &w->caps, w->id.worker_id, w->rts, w->n_rts) != 0)
        log_warn("warm pool did not start: every sandbox is created cold");
    *started = events_start(w, ev) == 0;
    if (!*started)
        log_warn("events thread did not start; deaths are found by polling only");
    *tele_started = telemetry_start(w, tele) == 0;
    if (!*tele_started)
        log_warn("metrics thread did not start; no metrics or logs are sent");
}

/* An agent has one: the gate's decisions into the workspace's audit. */
static int start_agent_thread(struct worker *w, pthread_t *th)
{
    if (agent_audit_start(w, th) == 0)
        return 1;
    log_warn("audit thread did not start; gate decisions stay in the gate's file only");
    return 0;
}

static int run(struct worker_conf *conf)
{
    struct worker w;
    pthread_t ev, tele, lease;
    char err[1024];
    int started = 0, tele_started = 0, lease_started = 0;

    memset(&w, 0, sizeof(w));
    w.conf = conf;
    w.stop = &stop_flag;
    w.acks = json_array();
    w.backlog = json_array();
    w.arrived = json_array();
    w.snap_reports = json_array();
    w.killed = json_array();
    atomic_store(&w.snap_dangling, 1); /* one left by a previous run is looked for once */
    w.sweep_nets = !conf->agent.on;    /* and networks it left */
    sbtable_init(&w.table);
    pthread_mutex_init(&w.id_mu, NULL);
    if (prepare(&w, err, sizeof(err)) != 0) {
        fprintf(stderr, "workerd: refusing to start: %s\n", err);
        release(&w);
        return 2;
    }
    log_info("workerd up: %ld slots, %.2f cpu, %ld MB, data %s, control %s", conf->slots,
             conf->cpu_cores, conf->memory_mb, conf->data_addr, conf->control_url);
    if (enrol(&w) == 0) {
        if (conf->tunnel && tunnel_client_start(&w) != 0)
            log_err("tunnel thread did not start: nothing reaches this worker's sandboxes");
        lease_started = lease_start(&w, &lease) == 0;
        if (!lease_started)
            log_warn("lease thread did not start; only the heartbeats renew the lease");
        if (conf->agent.on)
            started = start_agent_thread(&w, &ev);
        else
            start_docker_threads(&w, &ev, &tele, &started, &tele_started);
        heartbeat_run(&w);
    }
    if (conf->agent.on)
        agent_stop_all(conf);
    else
        log_info("stopping; sandboxes are left running");
    egress_pool_stop();
    warm_pool_stop();
    if (started)
        pthread_join(ev, NULL);
    if (tele_started)
        pthread_join(tele, NULL);
    if (lease_started)
        pthread_join(lease, NULL);
    release(&w);
    return 0;
}

int main(int argc, char **argv)
{
    struct worker_conf conf;
    char err[1024];
    int rc;

    log_set_name("workerd");
    srandom((unsigned)time(NULL) ^ (unsigned)getpid());
    rc = load_conf(&conf, argc, argv, err, sizeof(err));
    if (rc != 0) {
        if (rc == -1)
            fprintf(stderr, "workerd: refusing to start: %s\n", err);
        wconf_free(&conf);
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "workerd: refusing to start: libcurl initialisation failed\n");
        return 2;
    }
    /* No SA_RESTART: a stop interrupts a sleep or a wait at once. */
    if (stop_signals_install(on_signal, 0) != 0) {
        fprintf(stderr, "workerd: refusing to start: sigaction: %s\n", strerror(errno));
        return 2;
    }
    rc = run(&conf);
    wconf_free(&conf);
    curl_global_cleanup();
    return rc;
}
