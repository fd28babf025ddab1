/* enrol.c: the handshake, and keeping the identity it returns.
 *
 * A workerd with a saved identity re-enrols as that worker, so it keeps its
 * command stream and gets its unacknowledged commands again. If the control
 * plane refuses the saved identity (the worker was deleted), workerd enrols
 * afresh and removes the containers of its old worker id: nobody will ever
 * ask for them again, and the id was ours (it is in our state file). */
#include "agent.h"
#include "dataplane.h"
#include "worker.h"

#include "egress_pool.h"
#include "warm_pool.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HANDSHAKE_TIMEOUT_MS 30000L

static json_t *handshake_body(const struct worker *w, int with_identity)
{
    const struct worker_conf *c = w->conf;
    json_t *rts = json_array(), *tpls = json_array();
    json_t *b;

    for (int i = 0; i < w->n_rts; i++)
        json_array_append_new(rts, json_pack("{s:s, s:s}", "name", w->rts[i].name, "tier",
                                             tier_name(w->rts[i].tier)));
    for (int i = 0; i < c->n_templates; i++)
        json_array_append_new(tpls, json_string(c->templates[i].name));
    b = json_pack("{s:s, s:o, s:b, s:f, s:I, s:I, s:s, s:o}", "hostname", c->hostname, "runtimes",
                  rts, "egress", w->caps.egress, "cpu_cores", c->cpu_cores, "memory_mb",
                  (json_int_t)c->memory_mb, "slots", (json_int_t)c->slots, "data_addr",
                  c->data_addr, "templates", tpls);
    /* The control plane refuses an agent enrolled with an unscoped token,
     * and makes its sandboxes private unless the person allowed public
     * traffic (decision 0062). */
    if (b && c->agent.on) {
        json_object_set_new(b, "mode", json_string("agent"));
        json_object_set_new(b, "public_traffic", json_boolean(c->agent.public_traffic));
    }
    /* Behind its tunnel, the gateway has no address to connect to (0087). */
    if (b && c->tunnel) {
        json_object_del(b, "data_addr");
        json_object_set_new(b, "tunnel", json_true());
    }
    if (b && with_identity) {
        json_object_set_new(b, "worker_id", json_string(w->id.worker_id));
        json_object_set_new(b, "worker_secret", json_string(w->id.worker_secret));
    }
    return b;
}

/* Takes the answer: identity, workspace, poll and lease. 0 or -1. */
static int take_answer(struct worker *w, json_t *ans, struct worker_identity *got)
{
    const char *wid = json_string_value(json_object_get(ans, "worker_id"));
    const char *sec = json_string_value(json_object_get(ans, "worker_secret"));
    const char *ws = json_string_value(json_object_get(ans, "workspace"));
    json_int_t poll = json_integer_value(json_object_get(ans, "poll_ms"));
    json_int_t lease = json_integer_value(json_object_get(ans, "lease_ms"));

    if (!wid || !sec || !containers_id_ok(wid) || strlen(sec) >= sizeof(got->worker_secret)) {
        log_err("handshake answer lacks a usable worker_id or worker_secret");
        return -1;
    }
    snprintf(got->worker_id, sizeof(got->worker_id), "%s", wid);
    snprintf(got->worker_secret, sizeof(got->worker_secret), "%s", sec);
    snprintf(w->workspace, sizeof(w->workspace), "%s", ws ? ws : "");
    pthread_mutex_lock(&w->id_mu); /* the lease thread reads lease_ms */
    w->poll_ms = poll > 0 ? poll : 20000;
    w->lease_ms = lease > 0 ? lease : 45000;
    pthread_mutex_unlock(&w->id_mu);
    return 0;
}

/* An identity we held and lost: its containers are orphans now. */
static void drop_old_containers(struct worker *w, const char *old_wid)
{
    struct ctr_state *v = NULL;
    char err[256];
    int n = 0;

    if (containers_list(&w->dk, old_wid, &v, &n, err, sizeof(err)) != 0) {
        log_warn("old worker %s: cannot list its containers: %s", old_wid, err);
        return;
    }
    for (int i = 0; i < n; i++) {
        const struct log_about a = {.sandbox = v[i].sbid, .tier = v[i].tier, .worker = old_wid};
        log_about("info", &a, "removed (its worker was not re-admitted)");
        if (containers_kill(&w->dk, old_wid, v[i].sbid, err, sizeof(err)) != 0)
            log_about("warn", &a, "%s", err);
    }
    free(v);
}

static void adopt_identity(struct worker *w, const struct worker_identity *got)
{
    char err[512], old[STATE_ID_MAX];

    snprintf(old, sizeof(old), "%s", w->id.worker_id);
    pthread_mutex_lock(&w->id_mu);
    w->id = *got;
    pthread_mutex_unlock(&w->id_mu);
    log_ctx_set_process(LOG_WORKER, got->worker_id);
    if (state_save(w->conf->state_dir, &w->id, err, sizeof(err)) != 0)
        log_err("cannot save the worker identity: %s", err);
    if (old[0] && strcmp(old, got->worker_id) != 0) {
        log_warn("enrolled as new worker %s (worker %s was refused)", got->worker_id, old);
        /* Its ready proxies carry the old id: removed, and new ones made. */
        if (egress_pool_restart(got->worker_id) != 0)
            log_warn("egress pool did not restart: every proxy is made when its sandbox is");
        if (warm_pool_restart(got->worker_id) != 0)
            log_warn("warm pool did not restart: every sandbox is created cold");
        if (w->conf->agent.on)
            agent_stop_all(w->conf);
        else
            drop_old_containers(w, old);
        sbtable_free(&w->table);
        sbtable_init(&w->table);
    }
}

/* One handshake. 0 done, 1 retry later, 2 the saved identity was refused. */
static int handshake_once(struct worker *w, int with_identity)
{
    json_t *body = handshake_body(w, with_identity), *ans = NULL;
    struct worker_identity got;
    char err[512];
    long status = 0;
    int rc;

    if (!body)
        return 1;
    rc = control_post(&w->ctl, "/v1/worker/handshake", body, NULL, HANDSHAKE_TIMEOUT_MS, &status,
                      &ans, err, sizeof(err));
    json_decref(body);
    if (rc != 0) {
        log_warn("handshake: %s", err);
        return 1;
    }
    if (status == 200 && take_answer(w, ans, &got) == 0) {
        dataplane_set_identity(got.worker_id, json_string_value(json_object_get(ans, "data_key")),
                               json_string_value(json_object_get(ans, "previous_data_key")),
                               (long)json_integer_value(json_object_get(ans, "previous_valid_ms")));
        json_decref(ans);
        adopt_identity(w, &got);
        log_info("enrolled as worker %s (workspace \"%s\", poll %ld ms, lease %ld ms)",
                 w->id.worker_id, w->workspace, w->poll_ms, w->lease_ms);
        return 0;
    }
    log_warn("handshake answered %ld: %s", status,
             json_string_value(json_object_get(ans, "message")) ?: "(no message)");
    json_decref(ans);
    if (with_identity && status >= 400 && status < 500 && status != 401 && status != 429)
        return 2;
    return 1;
}

int enrol(struct worker *w)
{
    struct backoff b;

    backoff_init(&b, 500, w->conf->backoff_max_ms);
    while (!*w->stop) {
        int rc = handshake_once(w, w->id.worker_id[0] != '\0');
        if (rc == 2)
            rc = handshake_once(w, 0);
        if (rc == 0) {
            w->need_full = 1;
            w->resume = 1;
            return 0;
        }
        if (sleep_unless_stopped(backoff_next(&b), w->stop))
            break;
    }
    return -1;
}
