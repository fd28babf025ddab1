/* deaths.c: tells the control plane at once that a sandbox's container died.
 *
 * The main thread's long-poll stays open (abandoning it would strand its
 * handler, decision 0016), so the events thread sends a second, short
 * heartbeat of its own: "report_only", which renews nothing else, takes no
 * command and acknowledges none. The listing before the next long-poll reports
 * the same death again; reports are idempotent. */
#include "worker.h"

#include "clock.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

#define REPORT_TIMEOUT_MS 5000
#define OOM_SETTLE_MS 300

static void add_dead(json_t *out, const struct ctr_state *st)
{
    if (st->state != SB_RUNNING && st->state != SB_PAUSED)
        json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "id", st->sbid, "state",
                                             sb_state_name(st->state), "reason", st->reason));
}

/* The dead among the sandboxes we expect running: only sbid (inspected: the
 * listing lags a "die" event), or all of them (NULL). */
static json_t *dead_ones(struct worker *w, struct docker *q, const char *wid, const char *sbid)
{
    struct ctr_state one, *v = NULL;
    int n = 0;
    char err[256];
    json_t *out = json_array();

    if (sbid) {
        int rc = containers_state(q, wid, sbid, &one);
        /* Killed by signal 9: dockerd may set OOMKilled just after "die". */
        if (rc == 0 && strcmp(one.reason, "exit code 137") == 0) {
            clock_sleep_ms(OOM_SETTLE_MS);
            rc = containers_state(q, wid, sbid, &one);
        }
        if (rc == 0)
            add_dead(out, &one);
        return out;
    }
    if (containers_list(q, wid, &v, &n, err, sizeof(err)) != 0) {
        log_warn("death report: listing: %s", err);
        return out;
    }
    for (int i = 0; i < n; i++)
        if (sbtable_expect_running(&w->table, v[i].sbid))
            add_dead(out, &v[i]);
    free(v);
    return out;
}

int report_post(struct worker *w, struct control *ctl, json_t *sbs, const json_t *killed,
                const char *sbid)
{
    struct worker_identity id;
    json_t *body, *ans = NULL;
    long status = 0;
    char err[256];
    int told = 0;

    pthread_mutex_lock(&w->id_mu);
    id = w->id;
    pthread_mutex_unlock(&w->id_mu);
    if (!id.worker_id[0] || json_array_size(sbs) + json_array_size(killed) == 0) {
        json_decref(sbs);
        return 0;
    }
    body =
        json_pack("{s:[], s:o, s:b, s:b}", "acks", "sandboxes", sbs, "wait", 0, "report_only", 1);
    if (body && json_array_size(killed) > 0)
        json_object_set_new(body, "killed", json_deep_copy(killed));
    if (body && control_post(ctl, "/v1/worker/heartbeat", body, &id, REPORT_TIMEOUT_MS, &status,
                             &ans, err, sizeof(err)) != 0)
        log_sandbox("warn", sbid, NULL, "report beside the long-poll: %s", err);
    else if (body && status != 200)
        log_sandbox("warn", sbid, NULL, "report beside the long-poll answered %ld", status);
    else if (body) {
        told = 1;
        log_sandbox("info", sbid, NULL, "state of %zu sandbox(es), %zu kill(s) reported at once",
                    json_array_size(sbs), json_array_size(killed));
    }
    explicit_bzero(&id, sizeof(id));
    json_decref(body);
    json_decref(ans);
    return told;
}

void deaths_report(struct worker *w, struct docker *q, struct control *ctl, const char *sbid)
{
    char wid[STATE_ID_MAX];

    pthread_mutex_lock(&w->id_mu);
    snprintf(wid, sizeof(wid), "%s", w->id.worker_id);
    pthread_mutex_unlock(&w->id_mu);
    if (wid[0])
        report_post(w, ctl, dead_ones(w, q, wid, sbid), NULL, sbid);
}

void report_killed_now(struct worker *w, const char *sbid)
{
    struct control ctl;
    json_t *killed = json_pack("[s]", sbid);

    if (killed && control_init(&ctl, w->conf) == 0) {
        report_post(w, &ctl, json_array(), killed, NULL); /* its own line says it */
        control_close(&ctl);
    }
    json_decref(killed);
}

void report_add_running(struct worker *w, const char *sbid, json_t *told)
{
    struct sb_entry *e;

    pthread_mutex_lock(&w->table.mu);
    e = sbid ? sbtable_get(&w->table, sbid) : NULL;
    if (e && e->dirty && e->st.state == SB_RUNNING)
        json_array_append_new(told, heartbeat_report_of(e));
    pthread_mutex_unlock(&w->table.mu);
}
