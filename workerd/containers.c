#include "containers.h"

#include "snapshots.h"
#include "volumes.h"

#include "clock.h"
#include "egress_change.h"
#include "egress_dir.h"
#include "egress_pool.h"
#include "warm_index.h"
#include "warm_pool.h"
#include "egress_proxy.h"
#include "envd_ready.h"
#include "halt_pidfd.h"
#include "image_pull.h"
#include "layer_prune.h"
#include "log.h"
#include "sandbox_body.h"
#include "sbnet.h"
#include "start_ready.h"
#include "stopped.h"
#include "subvol_drop.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A SIGKILLed init is gone in milliseconds; past this, dockerd's way. */
#define HALT_WAIT_MS 5000

int containers_id_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n >= CTR_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '-' || s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

void containers_own_name(char *out, size_t len, const char *sbid, const char *wid)
{
    snprintf(out, len, "corral-%s-%s", sbid, wid);
}

void containers_name(char *out, size_t len, const char *sbid, const char *wid)
{
    if (!warm_index_ctr(sbid, out, len))
        containers_own_name(out, len, sbid, wid);
}

const char *containers_sbid_of(json_t *labels, const char *name, const char *wid, char *buf,
                               size_t len)
{
    const char *role = json_string_value(json_object_get(labels, "corral.role"));
    size_t n, wn = strlen(wid);

    const char *warm_id = json_string_value(json_object_get(labels, "corral.sandbox"));

    if (!role || strcmp(role, "warm") != 0)
        return warm_id;
    if (warm_index_sbid(warm_id, buf, len)) /* claimed, renamed or not yet */
        return buf;
    if (!name)
        return NULL;
    name += name[0] == '/';
    n = strlen(name);
    if (strncmp(name, "corral-", 7) != 0 || n <= 7 + 1 + wn || name[n - wn - 1] != '-' ||
        strcmp(name + n - wn, wid) != 0 || n - wn - 1 - 7 >= len)
        return NULL;
    snprintf(buf, len, "%.*s", (int)(n - wn - 1 - 7), name + 7);
    /* still warm: nobody's, never reported */
    return strncmp(buf, WARM_PREFIX, strlen(WARM_PREFIX)) == 0 || !containers_id_ok(buf) ? NULL
                                                                                         : buf;
}

static void st_set(struct ctr_state *st, enum sb_state state, const char *fmt, const char *arg)
{
    st->state = state;
    snprintf(st->reason, sizeof(st->reason), fmt, arg);
}

/* Exit reason of a stopped container: OOMKilled wins over the exit code. */
static void exit_reason(json_t *state, struct ctr_state *st)
{
    char code[32];

    st->state = SB_EXITED;
    if (json_is_true(json_object_get(state, "OOMKilled"))) {
        snprintf(st->reason, sizeof(st->reason), "OOMKilled");
        return;
    }
    snprintf(code, sizeof(code), "%lld",
             (long long)json_integer_value(json_object_get(state, "ExitCode")));
    st_set(st, SB_EXITED, "exit code %s", code);
}

/* GET /containers/NAME/json. 0 found, 1 absent, -1 dockerd unreachable. */
static int inspect_within(struct docker *d, const char *name, long timeout_ms, json_t **out,
                          char *err, size_t errlen)
{
    char path[512];
    long status = 0;

    snprintf(path, sizeof(path), "/containers/%s/json", name);
    if (docker_call(d, "GET", path, NULL, timeout_ms, &status, out, err, errlen) != 0)
        return -1;
    if (status == 404) {
        json_decref(*out);
        *out = NULL;
        return 1;
    }
    if (status != 200) {
        snprintf(err, errlen, "inspect %s: %s", name, docker_errmsg(*out, status));
        json_decref(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

static int inspect(struct docker *d, const char *name, json_t **out, char *err, size_t errlen)
{
    return inspect_within(d, name, DOCKER_TIMEOUT_MS, out, err, errlen);
}

static int copy_ip(const char *s, char *ip, size_t len)
{
    if (!s || !*s || strlen(s) >= len || strspn(s, "0123456789.") != strlen(s))
        return -1;
    snprintf(ip, len, "%s", s);
    return 0;
}

/* The IPv4 address in an inspect answer: NetworkSettings.IPAddress (the
 * default bridge), else the first network's. 0 with ip set, -1 when none. */
static int address_of(json_t *info, char *ip, size_t len)
{
    json_t *ns = json_object_get(info, "NetworkSettings"), *net;
    const char *name;

    if (copy_ip(json_string_value(json_object_get(ns, "IPAddress")), ip, len) == 0)
        return 0;
    json_object_foreach(json_object_get(ns, "Networks"), name, net)
    {
        if (copy_ip(json_string_value(json_object_get(net, "IPAddress")), ip, len) == 0)
            return 0;
    }
    return -1;
}

int containers_ip(struct docker *d, const char *wid, const char *sbid, long timeout_ms, char *ip,
                  size_t len)
{
    char name[160], err[256];
    json_t *info = NULL;
    int rc;

    containers_name(name, sizeof(name), sbid, wid);
    if (inspect_within(d, name, timeout_ms, &info, err, sizeof(err)) != 0)
        return -1;
    /* A frozen sandbox has an address but nobody to answer: not routable. */
    rc = json_is_true(json_object_get(json_object_get(info, "State"), "Running")) &&
                 !json_is_true(json_object_get(json_object_get(info, "State"), "Paused"))
             ? address_of(info, ip, len)
             : -1;
    json_decref(info);
    return rc;
}

/* The subvolumes of the container named name (or by its id) emptied ahead
 * of dockerd's removal, when that is on (subvol_drop.h); never while dockerd
 * is removing it already (another thread's kill): its walk would meet them
 * going. */
static void drop_subvolumes(struct docker *d, const char *name)
{
    char err[128];
    json_t *info = NULL;
    const char *status;

    if (!subvol_drop_on() || inspect(d, name, &info, err, sizeof(err)) != 0)
        return;
    status = json_string_value(json_object_get(json_object_get(info, "State"), "Status"));
    if (!status || strcmp(status, "removing") != 0)
        subvol_drop(json_string_value(json_object_get(info, "Id")));
    json_decref(info);
}

int containers_remove(struct docker *d, const char *name, char *err, size_t errlen)
{
    char path[512];
    long status = 0;
    json_t *ans = NULL;

    drop_subvolumes(d, name);
    snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", name);
    if (docker_call(d, "DELETE", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return -1;
    if (status != 204 && status != 404 && status != 409) {
        snprintf(err, errlen, "remove %s: %s", name, docker_errmsg(ans, status));
        json_decref(ans);
        return -1;
    }
    json_decref(ans); /* 409: removal already in progress, which is what we want */
    return 0;
}

/* The kernel's kill (halt_pidfd.h) of a running, unfrozen container: a
 * frozen process dies only once thawed, which dockerd's kill sees to.
 * 0 no process of it runs; -1 dockerd's way. */
static int halt_by_kernel(struct docker *d, const char *name)
{
    char path[512], err[128];
    long status = 0;
    json_t *ans = NULL, *st;
    int rc = -1;

    snprintf(path, sizeof(path), "/containers/%s/json", name);
    if (docker_call(d, "GET", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, sizeof(err)) != 0)
        return -1;
    st = json_object_get(ans, "State");
    if (status == 200 && json_is_true(json_object_get(st, "Running")) &&
        !json_is_true(json_object_get(st, "Paused")))
        rc = halt_pidfd((long)json_integer_value(json_object_get(st, "Pid")),
                        json_string_value(json_object_get(ans, "Id")), HALT_WAIT_MS);
    json_decref(ans);
    return rc;
}

int containers_halt(struct docker *d, const char *wid, const char *sbid, char *err, size_t errlen)
{
    char name[256], path[512];
    long status = 0;
    json_t *ans = NULL;

    if (!containers_id_ok(sbid))
        return 0;
    containers_name(name, sizeof(name), sbid, wid);
    if (halt_by_kernel(d, name) == 0)
        return 0;
    snprintf(path, sizeof(path), "/containers/%s/kill?signal=KILL", name);
    if (docker_call(d, "POST", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return -1;
    json_decref(ans);
    ans = NULL;
    if (status == 404)
        return 0;
    /* 409: not running (exited, or never started). Either way, wait until
     * dockerd has seen its init exit: the kernel kills every other process
     * of its pid namespace before that exit is reported. */
    snprintf(path, sizeof(path), "/containers/%s/wait?condition=not-running", name);
    if (docker_call(d, "POST", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return -1;
    json_decref(ans);
    if (status != 200 && status != 404) {
        snprintf(err, errlen, "wait for %s to stop: HTTP %ld", name, status);
        return -1;
    }
    return 0;
}

/* Gives up on a create: the sandbox is reported failed with why, and its
 * containers and networks are removed, so that nothing half-made is left. */
static int give_up(struct docker *d, const char *wid, struct ctr_state *st)
{
    char err[256];

    st->state = SB_FAILED;
    if (containers_kill(d, wid, st->sbid, err, sizeof(err)) != 0)
        log_warn("%s", err);
    return 1;
}

/* Starts a created container; a start that fails gives up on the sandbox. */
static int start(struct docker *d, const char *wid, const char *name, struct ctr_state *st)
{
    char path[512], err[256];
    long status = 0;
    json_t *ans = NULL;

    snprintf(path, sizeof(path), "/containers/%s/start", name);
    if (docker_call(d, "POST", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, sizeof(err)) !=
        0) {
        log_warn("%s", err);
        return -1;
    }
    if (status == 204 || status == 304) {
        json_decref(ans);
        st_set(st, SB_RUNNING, "%s", "");
        return 0;
    }
    st_set(st, SB_FAILED, "start: %.200s", docker_errmsg(ans, status));
    json_decref(ans);
    return give_up(d, wid, st);
}

/* A started container is running only once envd answers /health: polls its
 * address until ready_ms runs out (bounded, so that a broken image costs one
 * create, not the heartbeat). A container that stops meanwhile failed. */
static int await_envd(struct docker *d, const char *wid, const char *name, long ready_ms,
                      struct ctr_state *st)
{
    int64_t deadline = clock_now_ms() + ready_ms;
    char err[256], ip[64];
    json_t *info = NULL, *state;

    for (;;) {
        int rc = inspect(d, name, &info, err, sizeof(err));
        if (rc < 0) {
            log_warn("%s", err);
            return -1;
        }
        if (rc == 1) {
            st_set(st, SB_FAILED, "%s", "container vanished during create");
            return give_up(d, wid, st);
        }
        state = json_object_get(info, "State");
        if (dk_state_decode(json_string_value(json_object_get(state, "Status"))) != DK_RUNNING) {
            exit_reason(state, st);
            snprintf(err, sizeof(err), "%s", st->reason);
            json_decref(info);
            snprintf(st->reason, sizeof(st->reason), "sandbox stopped before envd answered (%.64s)",
                     err);
            return give_up(d, wid, st);
        }
        rc = address_of(info, ip, sizeof(ip));
        json_decref(info);
        if (rc == 0 && envd_health_once(ip, ENVD_PORT)) {
            st_set(st, SB_RUNNING, "%s", "");
            return 0;
        }
        if (clock_now_ms() >= deadline) {
            snprintf(st->reason, sizeof(st->reason), "envd did not answer on port %d within %ld ms",
                     ENVD_PORT, ready_ms);
            return give_up(d, wid, st);
        }
        clock_sleep_ms(10); /* envd starts in milliseconds: poll often, briefly */
    }
}

int containers_boot(struct docker *d, const char *wid, const char *sbid, long ready_ms,
                    struct ctr_state *st)
{
    char name[160];
    int rc;

    memset(st, 0, sizeof(*st));
    snprintf(st->sbid, sizeof(st->sbid), "%s", sbid);
    containers_name(name, sizeof(name), sbid, wid);
    rc = start(d, wid, name, st);
    if (rc == 0)
        rc = await_envd(d, wid, name, ready_ms, st);
    if (rc == 0 && warm_pool_reinit(d, wid, sbid) != 0) { /* envd warm again: told again */
        st_set(st, SB_FAILED, "%s", "envd of a claimed warm sandbox refused its init");
        return give_up(d, wid, st);
    }
    return rc;
}

int containers_stop(struct docker *d, const char *wid, const char *sbid, char *err, size_t errlen)
{
    char name[160], path[256];
    long status = 0;
    json_t *ans = NULL;

    containers_name(name, sizeof(name), sbid, wid);
    /* envd ends its processes at SIGTERM and exits at once; t only bounds a
     * wedged one. A frozen container is stopped as well (dockerd thaws it). */
    snprintf(path, sizeof(path), "/containers/%s/stop?t=%d", name, CONTAINERS_STOP_GRACE_S);
    if (docker_call(d, "POST", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return -1;
    json_decref(ans);
    if (status == 204 || status == 304) /* 304: stopped already */
        return 0;
    if (status == 404)
        return 1;
    snprintf(err, errlen, "stop %s: dockerd answered %ld", name, status);
    return -1;
}

int containers_settle(struct docker *d, const char *wid, const char *name, long ready_ms,
                      struct ctr_state *st)
{
    json_t *info = NULL, *state;
    char err[256];
    enum dk_state s;
    int rc = inspect(d, name, &info, err, sizeof(err));

    if (rc != 0) {
        if (rc < 0)
            log_warn("%s", err);
        else
            st_set(st, SB_FAILED, "%s", "container vanished during create");
        return rc < 0 ? -1 : 1;
    }
    state = json_object_get(info, "State");
    s = dk_state_decode(json_string_value(json_object_get(state, "Status")));
    if (s == DK_CREATED) {
        int64_t t0 = clock_now_ms();
        rc = start(d, wid, name, st);
        st->phase_ms[CTR_PHASE_START] = (long)(clock_now_ms() - t0);
        t0 = clock_now_ms();
        if (rc == 0)
            rc = await_envd(d, wid, name, ready_ms, st);
        st->phase_ms[CTR_PHASE_ENVD] = (long)(clock_now_ms() - t0);
    } else if (s == DK_EXITED || s == DK_DEAD) {
        exit_reason(state, st);
    } else {
        rc = await_envd(d, wid, name, ready_ms, st); /* a create delivered again */
    }
    json_decref(info);
    return rc;
}

/* A refusal after networks may exist: reported failed, everything removed. */
static int refused(struct docker *d, const char *wid, struct ctr_state *st, const char *why)
{
    st_set(st, SB_FAILED, "%s", why);
    return give_up(d, wid, st);
}

static int create_refused(struct docker *d, const char *wid, struct ctr_state *st, json_t *ans,
                          long status, const char *image)
{
    char why[CTR_REASON_MAX];

    if (status == 404)
        snprintf(why, sizeof(why), "image %.200s not found", image);
    else
        snprintf(why, sizeof(why), "create: %.200s", docker_errmsg(ans, status));
    json_decref(ans);
    return refused(d, wid, st, why);
}

/* The sandbox's own network of kind k, made unless it exists (its name in
 * netname). 0, 1 refused (st says why), -1 dockerd down. */
static int own_network(struct docker *d, const char *wid, enum sbnet_kind k, char *netname,
                       size_t len, struct ctr_state *st)
{
    char err[256];
    int rc;

    sbnet_name(netname, len, st->sbid, wid, k);
    rc = sbnet_ensure(d, wid, st->sbid, k, NULL, err, sizeof(err));
    if (rc < 0)
        log_warn("%s", err);
    if (rc != 0)
        return rc > 0 ? refused(d, wid, st, err) : rc;
    return 0;
}

/* With a policy: a ready network and proxy from the pool (the proxy is up:
 * nothing to wait for), else the sandbox's own internal network, made now,
 * and its proxy started on a thread (*job) while the sandbox starts. */
static int wire_proxy(struct docker *d, const struct worker_conf *c, const char *wid, json_t *sb,
                      char *netname, size_t len, struct egress_job *job, struct ctr_state *st)
{
    json_t *policy = json_object_get(sb, "egress");
    char err[256];
    int rc = egress_pool_take(d, st->sbid, policy, netname, len, err, sizeof(err));

    *job = (struct egress_job){.c = c, .wid = wid, .sbid = st->sbid};
    if (rc != 2) {
        job->pooled = 1;
        if (rc < 0)
            log_warn("%s", err);
        return rc > 0 ? refused(d, wid, st, err) : rc;
    }
    if ((rc = own_network(d, wid, SBNET_INTERNAL, netname, len, st)) != 0)
        return rc;
    /* Its directory before either container: the proxy reads it, and the
     * sandbox's gets its CA from it (egress_ca_put). */
    if (egress_dir_write(c, st->sbid, policy, err, sizeof(err)) != 0)
        return refused(d, wid, st, err);
    if (egress_proxy_spawn(job) != 0)
        return refused(d, wid, st, job->err);
    return 0;
}

/* The network the sandbox's container joins: its own open one, or with a
 * policy the internal one it shares with its proxy (wire_proxy).
 * 0, 1 refused (st says why), -1 dockerd down. */
static int wire(struct docker *d, const struct worker_conf *c, const struct host_caps *caps,
                const char *wid, json_t *sb, struct sandbox_net *net, char *netname, size_t len,
                struct egress_job *job, struct ctr_state *st)
{
    net->network = netname;
    net->disk_quota = caps->disk_quota;
    net->via_proxy = json_is_object(json_object_get(sb, "egress"));
    if (!caps->walled)
        return refused(d, wid, st, "this worker's network isolation rules are not in place");
    if (net->via_proxy && !caps->egress)
        return refused(d, wid, st, "egress policy: this worker has no egress proxy");
    if (net->via_proxy)
        return wire_proxy(d, c, wid, sb, netname, len, job, st);
    return own_network(d, wid, SBNET_OPEN, netname, len, st);
}

/* The proxy must be up before the sandbox counts as running. */
static int proxy_joined(struct docker *d, const char *wid, struct egress_job *job, int rc,
                        struct ctr_state *st)
{
    int prc = job->pooled ? 0 : egress_proxy_join(job);

    if (rc == 1) /* removed already, but the proxy's thread may have made more since */
        return give_up(d, wid, st);
    if (prc < 0)
        log_warn("%s", job->err);
    if (prc > 0)
        return refused(d, wid, st, job->err);
    return rc != 0 ? rc : prc;
}

/* A create whose "image" is a registry's (not a snapshot's): its template
 * is a tenant's, which workerd.conf does not list. */
static int registry_image(json_t *sb)
{
    const char *image = json_string_value(json_object_get(sb, "image"));

    return image && *image && !snapshot_image_name_ok(image);
}

/* The id, tier and template of a create (a registry image's template in
 * own, named for its labels); 1 (st failed) when unusable. */
static int take_create(const struct worker_conf *c, json_t *sb, struct ctr_state *st,
                       const struct wtemplate **t, struct wtemplate *own)
{
    const char *sbid = json_string_value(json_object_get(sb, "id"));
    const char *tname = json_string_value(json_object_get(sb, "template"));

    memset(st, 0, sizeof(*st));
    snprintf(st->sbid, sizeof(st->sbid), "%s", sbid && containers_id_ok(sbid) ? sbid : "");
    snprintf(st->tier, sizeof(st->tier), "%s",
             json_string_value(json_object_get(sb, "tier")) ?: "UNKNOWN");
    if (!st->sbid[0]) {
        st_set(st, SB_FAILED, "%s", "bad sandbox id");
        return 1;
    }
    *t = tname ? wconf_template(c, tname) : NULL;
    if (!*t && tname && *tname && strlen(tname) < sizeof(own->name) && registry_image(sb)) {
        snprintf(own->name, sizeof(own->name), "%s", tname);
        own->image[0] = '\0';
        *t = own;
    }
    if (!*t) {
        st_set(st, SB_FAILED, "unknown template %.64s", tname ? tname : "(none)");
        return 1;
    }
    return 0;
}

/* A template's start and ready commands, once envd answers. */
static int started(struct docker *d, const char *wid, const char *name, json_t *sb, int fresh,
                   struct ctr_state *st)
{
    json_t *start = json_object_get(sb, "start");
    char why[CTR_REASON_MAX];
    int rc;

    if (!json_is_object(start) || st->state != SB_RUNNING)
        return 0;
    rc = start_ready_run(d, name, start, fresh, why, sizeof(why));
    if (rc < 0)
        log_warn("%s: start or ready command: dockerd did not answer", name);
    return rc > 0 ? refused(d, wid, st, why) : rc;
}

/* The sandbox's own container: created (or found) and brought to running. */
static int create_and_settle(struct docker *d, const struct worker_conf *c,
                             const struct wtemplate *t, const char *wid, json_t *sb,
                             const struct sandbox_net *net, long ready_ms, struct ctr_extras *x,
                             struct ctr_state *st)
{
    char name[256], path[512], err[256];
    json_t *body, *ans = NULL;
    long status = 0;
    int rc;

    containers_own_name(name, sizeof(name), st->sbid, wid);
    body = sandbox_body(c, t, wid, sb, net);
    if (!body)
        return refused(d, wid, st, "out of memory");
    snprintf(path, sizeof(path), "/containers/create?name=%s", name);
    int64_t t0 = clock_now_ms();
    rc = docker_call(d, "POST", path, body, DOCKER_TIMEOUT_MS, &status, &ans, err, sizeof(err));
    st->phase_ms[CTR_PHASE_CREATE] = (long)(clock_now_ms() - t0);
    json_decref(body);
    if (rc != 0) {
        log_warn("%s", err);
        return -1;
    }
    if (status != 201 && status != 409) /* 409: it exists, a create delivered again */
        return create_refused(d, wid, st, ans, status, t->image);
    json_decref(ans);
    x->fresh = status == 201;
    if (net->via_proxy && (rc = egress_ca_put(d, c, name, st->sbid, err, sizeof(err))) != 0)
        return rc > 0 ? refused(d, wid, st, err) : rc;
    rc = containers_settle(d, wid, name, ready_ms, st);
    return rc == 0 ? started(d, wid, name, sb, x->fresh, st) : rc;
}

/* *t's image replaced by image, in own. */
static void image_in_own(const char *image, struct wtemplate *own, const struct wtemplate **t)
{
    if (*t != own)
        *own = **t;
    snprintf(own->image, sizeof(own->image), "%s", image);
    *t = own;
}

/* A create from an image of its own, under the template it came from: a
 * snapshot's, which must be one this worker made (decision 0048), or a
 * registry's (a tenant's template: docs/templates.md), pulled when absent.
 * 0, 1 refused (st), -1. */
static int from_image(struct docker *d, const struct worker_conf *c, const char *wid, json_t *sb,
                      struct ctr_extras *x, struct wtemplate *own, const struct wtemplate **t,
                      struct ctr_state *st)
{
    const char *image = json_string_value(json_object_get(sb, "image"));
    char err[CTR_REASON_MAX];
    int rc;

    if (!image)
        return 0;
    if (registry_image(sb))
        rc = image_ensure(d, c, &x->id, image, err, sizeof(err));
    else
        rc = snapshot_image_ours(d, wid, image, err, sizeof(err));
    if (rc != 0) {
        if (rc > 0)
            st_set(st, SB_FAILED, "%s", err);
        else
            log_warn("%s", err);
        return rc;
    }
    image_in_own(image, own, t);
    return 0;
}

/* A build's container starts from its longest cached prefix (x->plan), planned
 * after the cache's old layers went: builds are what fill it. */
static int from_cache(struct docker *d, const struct worker_conf *c, const char *wid, json_t *sb,
                      struct ctr_extras *x, struct wtemplate *own, const struct wtemplate **t,
                      struct ctr_state *st)
{
    json_t *build = json_object_get(sb, "build");
    char err[256];
    int rc;

    if (!json_is_object(build))
        return 0;
    layer_cache_prune(d, wid, c->layer_cache_max_age_s);
    rc = layer_plan_make(d, (*t)->image, build, &x->plan, err, sizeof(err));
    if (rc != 0) {
        if (rc > 0)
            st_set(st, SB_FAILED, "build: %.200s", err);
        else
            log_warn("%s", err);
        return rc;
    }
    image_in_own(x->plan.image, own, t);
    return 0;
}

/* A create delivered again after it claimed a warm sandbox: what that
 * container is now (the cold path would make a second one). */
static int claimed_again(struct docker *d, const char *wid, struct ctr_state *st)
{
    char tier[sizeof(st->tier)];
    int rc;

    snprintf(tier, sizeof(tier), "%s", st->tier);
    rc = containers_state(d, wid, st->sbid, st);
    snprintf(st->tier, sizeof(st->tier), "%s", tier);
    if (rc > 0)
        st_set(st, SB_FAILED, "%s", "its claimed warm container is gone");
    return rc;
}

/* The cold path of containers_create: network, container, start, envd. */
static int create_cold(struct docker *d, const struct worker_conf *c, const struct host_caps *caps,
                       const struct wtemplate *t, const char *wid, json_t *sb, long ready_ms,
                       struct ctr_extras *x, struct ctr_state *st)
{
    char netname[SBNET_NAME_MAX];
    struct sandbox_net net;
    struct egress_job job;
    int64_t t0 = clock_now_ms();
    int rc;

    rc = wire(d, c, caps, wid, sb, &net, netname, sizeof(netname), &job, st);
    st->phase_ms[CTR_PHASE_NET] = (long)(clock_now_ms() - t0);
    if (rc != 0)
        return rc;
    rc = create_and_settle(d, c, t, wid, sb, &net, ready_ms, x, st);
    if (rc == 1 && !net.via_proxy && strstr(st->reason, "start: network") &&
        strstr(st->reason, "not found")) {
        /* dockerd, making many networks at once, has been seen to lose one
         * between a container's create and its start. Everything was removed
         * (give_up): the whole create is made once more. */
        log_sandbox("warn", st->sbid, st->tier, "%s; creating it once more", st->reason);
        rc = wire(d, c, caps, wid, sb, &net, netname, sizeof(netname), &job, st);
        if (rc == 0)
            rc = create_and_settle(d, c, t, wid, sb, &net, ready_ms, x, st);
    }
    return net.via_proxy ? proxy_joined(d, wid, &job, rc, st) : rc;
}

int containers_create(struct docker *d, const struct worker_conf *c, const struct host_caps *caps,
                      const char *wid, json_t *sb, long ready_ms, struct ctr_extras *x,
                      struct ctr_state *st)
{
    const struct wtemplate *t;
    struct wtemplate own;
    char verr[256];
    int64_t t0 = clock_now_ms();
    int rc;

    if (take_create(c, sb, st, &t, &own) != 0)
        return 1;
    if (warm_index_ctr(st->sbid, verr, sizeof(verr)))
        return claimed_again(d, wid, st);
    if ((rc = from_image(d, c, wid, sb, x, &own, &t, st)) != 0 ||
        (rc = from_cache(d, c, wid, sb, x, &own, &t, st)) != 0)
        return rc;
    if ((rc = volumes_prepare(d, wid, sb, verr, sizeof(verr))) != 0) {
        if (rc > 0)
            st_set(st, SB_FAILED, "%s", verr);
        return rc;
    }
    egress_pool_busy();
    st->phase_ms[CTR_PHASE_PREP] = (long)(clock_now_ms() - t0);
    t0 = clock_now_ms();
    rc = warm_pool_claim(d, wid, sb, st);
    st->phase_ms[CTR_PHASE_CLAIM] = (long)(clock_now_ms() - t0);
    if (rc != 2) {
        x->fresh = rc == 0;
        return rc;
    }
    warm_pool_cold(1); /* no refill starts beside it */
    rc = create_cold(d, c, caps, t, wid, sb, ready_ms, x, st);
    warm_pool_cold(0);
    return rc;
}

/* GET /{containers,networks}?filters=: the objects labelled with this worker
 * and, when value is not NULL, with label (corral.sandbox or corral.role) =
 * value; query ("" or ending in '&') goes before the filters. Returns the
 * answer array, or NULL (err set). */
static json_t *list_by(struct docker *d, const char *what, const char *query, const char *wid,
                       const char *label, const char *value, char *err, size_t errlen)
{
    char path[1024], *enc;
    long status = 0;
    json_t *ans = NULL,
           *labels = value ? json_pack("[s+, s++]", "corral.worker=", wid, label, "=", value)
                           : json_pack("[s+]", "corral.worker=", wid);

    enc = docker_filters(d, labels ? json_pack("{s:o}", "label", labels) : NULL);
    if (!enc) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(path, sizeof(path), "/%s?%sfilters=%s", what, query, enc);
    curl_free(enc);
    if (docker_call(d, "GET", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return NULL;
    if (status != 200 || !json_is_array(ans)) {
        snprintf(err, errlen, "list %s: %s", what, docker_errmsg(ans, status));
        json_decref(ans);
        return NULL;
    }
    return ans;
}

static json_t *list_labelled(struct docker *d, const char *what, const char *query, const char *wid,
                             const char *sbid, char *err, size_t errlen)
{
    return list_by(d, what, query, wid, "corral.sandbox", sbid, err, errlen);
}

json_t *containers_list_own(struct docker *d, const char *what, const char *query, const char *wid,
                            const char *role)
{
    char err[256];

    return list_by(d, what, query, wid, "corral.role", role, err, sizeof(err));
}

/* A network's removal was refused since the main thread last asked. */
static atomic_int networks_refused;

static int remove_networks(struct docker *d, const char *wid, const char *sbid, char *err,
                           size_t errlen)
{
    json_t *nets = list_labelled(d, "networks", "", wid, sbid, err, errlen), *n, *ans;
    char path[512];
    long status;
    size_t i;

    if (!nets)
        return -1;
    json_array_foreach(nets, i, n)
    {
        snprintf(path, sizeof(path), "/networks/%s",
                 json_string_value(json_object_get(n, "Id")) ?: "-");
        ans = NULL;
        if (docker_call(d, "DELETE", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) !=
            0) {
            json_decref(nets);
            return -1;
        }
        /* Not a failure of the kill (its container is gone), but a network
         * left behind, for the main thread's sweep (netsweep.h). */
        if (status >= 300 && status != 404) {
            log_warn("network %s of %s not removed: dockerd answered %ld", path + 10, sbid, status);
            atomic_store(&networks_refused, 1);
        }
        json_decref(ans);
    }
    json_decref(nets);
    return 0;
}

int containers_networks_refused(void)
{
    return atomic_exchange(&networks_refused, 0);
}

int containers_kill(struct docker *d, const char *wid, const char *sbid, char *err, size_t errlen)
{
    char name[256];
    json_t *ctrs, *ctr;
    size_t i;

    if (!containers_id_ok(sbid))
        return 0; /* no container can carry such a label: it is gone */
    ctrs = list_labelled(d, "containers/json", "all=1&", wid, sbid, err, errlen);
    if (!ctrs)
        return -1;
    json_array_foreach(ctrs, i, ctr)
    {
        const char *id = json_string_value(json_object_get(ctr, "Id"));
        if (id && containers_remove(d, id, err, errlen) != 0) {
            json_decref(ctrs);
            return -1;
        }
    }
    json_decref(ctrs);
    /* A claimed warm sandbox carries its warm id's labels, its own name. */
    containers_name(name, sizeof(name), sbid, wid);
    if (warm_pool_forget(d, wid, sbid) != 0 || containers_remove(d, name, err, errlen) != 0)
        return -1;
    stopped_clear(sbid); /* its container gone: nothing left to resume */
    /* A proxy from the pool carries no sandbox label, only the name. */
    egress_proxy_name(name, sizeof(name), sbid, wid);
    if (containers_remove(d, name, err, errlen) != 0)
        return -1;
    if (egress_pool_forget(d, sbid) != 0) {
        snprintf(err, errlen, "egress pool: the proxy's network was not removed");
        return -1;
    }
    return remove_networks(d, wid, sbid, err, errlen) != 0 ? -1 : 0;
}

int containers_state(struct docker *d, const char *wid, const char *sbid, struct ctr_state *st)
{
    char name[160], err[256];
    json_t *info = NULL, *state;
    int rc;

    containers_name(name, sizeof(name), sbid, wid);
    if ((rc = inspect(d, name, &info, err, sizeof(err))) != 0)
        return rc;
    memset(st, 0, sizeof(*st));
    snprintf(st->sbid, sizeof(st->sbid), "%s", sbid);
    state = json_object_get(info, "State");
    if (json_is_true(json_object_get(state, "Running")))
        st_set(st, json_is_true(json_object_get(state, "Paused")) ? SB_PAUSED : SB_RUNNING, "%s",
               "");
    else if (stopped_has(sbid))
        st_set(st, SB_PAUSED, "%s", "");
    else
        exit_reason(state, st);
    json_decref(info);
    return 0;
}

int containers_running(struct docker *d, const char *wid, const char *sbid)
{
    char name[160], err[256];
    json_t *info = NULL;
    int rc;

    containers_name(name, sizeof(name), sbid, wid);
    if ((rc = inspect(d, name, &info, err, sizeof(err))) != 0)
        return rc < 0 ? -1 : 2;
    rc = json_is_true(json_object_get(json_object_get(info, "State"), "Running"));
    json_decref(info);
    return rc;
}

/* One entry of GET /containers/json as a state; 0 when it is to be reported. */
static int entry_state(struct docker *d, const char *wid, json_t *ctr, struct ctr_state *st)
{
    json_t *labels = json_object_get(ctr, "Labels"), *info = NULL;
    char buf[CTR_ID_MAX];
    const char *sbid = containers_sbid_of(
        labels, json_string_value(json_array_get(json_object_get(ctr, "Names"), 0)), wid, buf,
        sizeof(buf));
    const char *state_name = json_string_value(json_object_get(ctr, "State"));
    enum dk_state state = dk_state_decode(state_name);
    const char *id = json_string_value(json_object_get(ctr, "Id"));
    char err[256];

    const char *role = json_string_value(json_object_get(labels, "corral.role"));

    if (!sbid || !containers_id_ok(sbid) || !state_name || !id || state == DK_CREATED)
        return -1;
    if (role && strcmp(role, "egress") == 0)
        return -1; /* a sandbox's proxy: the sandbox itself is what is reported */
    memset(st, 0, sizeof(*st));
    snprintf(st->sbid, sizeof(st->sbid), "%s", sbid);
    snprintf(st->tier, sizeof(st->tier), "%s",
             json_string_value(json_object_get(labels, "corral.tier")) ?: "UNKNOWN");
    if (state != DK_EXITED && state != DK_DEAD) {
        st_set(st, state == DK_PAUSED ? SB_PAUSED : SB_RUNNING, "%s", "");
        return 0;
    }
    if (stopped_has(sbid)) { /* stopped by a pause without memory (decision 0074) */
        st_set(st, SB_PAUSED, "%s", "");
        return 0;
    }
    if (inspect(d, id, &info, err, sizeof(err)) != 0) {
        st_set(st, SB_EXITED, "%s", "exit status unknown");
        return 0;
    }
    exit_reason(json_object_get(info, "State"), st);
    json_decref(info);
    return 0;
}

int containers_list(struct docker *d, const char *wid, struct ctr_state **out, int *n, char *err,
                    size_t errlen)
{
    json_t *ctrs = list_labelled(d, "containers/json", "all=1&", wid, NULL, err, errlen), *ctr;
    size_t i;

    *out = NULL;
    *n = 0;
    if (!ctrs)
        return -1;
    *out = calloc(json_array_size(ctrs) + 1, sizeof(**out));
    if (!*out) {
        json_decref(ctrs);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_array_foreach(ctrs, i, ctr) if (entry_state(d, wid, ctr, &(*out)[*n]) == 0)(*n)++;
    json_decref(ctrs);
    return 0;
}
