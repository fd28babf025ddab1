/* reconcile.c: dockerd is the truth about our sandboxes; the table follows it.
 *
 * Runs before every heartbeat. Why poll rather than trust the event stream
 * alone: events are lost while dockerd restarts or the stream reconnects, and
 * a listing filtered on our worker label is one cheap call. The events thread
 * only makes this run sooner (it cuts the long-poll short on a death). */
#include "worker.h"

#include "agent.h"
#include "log.h"
#include "netsweep.h"

#include <stdlib.h>
#include <string.h>

static void note_change(const struct sb_entry *old, const struct ctr_state *now)
{
    if (!old)
        log_sandbox("info", now->sbid, now->tier, "found %s%s%s (adopted)",
                    sb_state_name(now->state), now->reason[0] ? ", " : "", now->reason);
    else if (old->st.state != now->state || strcmp(old->st.reason, now->reason) != 0)
        log_sandbox("info", now->sbid, now->tier, "%s%s%s%s", sb_state_name(now->state),
                    now->reason[0] ? " (" : "", now->reason, now->reason[0] ? ")" : "");
}

/* Sandboxes in the table whose container is no longer listed: someone
 * removed it behind our back, or dockerd did while it went down in the
 * middle of reaping it. Reported once as exited, then forgotten; what it
 * left (its egress proxy, dead after dockerd's restart, and its networks)
 * is removed now, since nothing will reap it later. */
static void mark_vanished(struct worker *w)
{
    char err[256], sbid[CTR_ID_MAX], tier[16];

    for (int i = 0; i < w->table.n; i++) {
        struct sb_entry *e = &w->table.v[i];
        if (e->seen || e->drop)
            continue;
        log_sandbox("info", e->st.sbid, e->st.tier, "container vanished");
        pthread_mutex_lock(&w->table.mu);
        e->st.state = SB_EXITED;
        snprintf(e->st.reason, sizeof(e->st.reason), "container removed");
        e->dirty = 1;
        e->drop = 1;
        snprintf(sbid, sizeof(sbid), "%s", e->st.sbid); /* e may move once unlocked */
        snprintf(tier, sizeof(tier), "%s", e->st.tier);
        pthread_mutex_unlock(&w->table.mu);
        if (!w->conf->agent.on &&
            containers_kill(&w->dk, w->id.worker_id, sbid, err, sizeof(err)) != 0)
            log_sandbox("warn", sbid, tier, "removing what it left: %s", err);
    }
}

/* Our containers, or in agent mode our sessions (decision 0054). */
static int list_sandboxes(struct worker *w, struct ctr_state **v, int *n, char *err, size_t len)
{
    if (!w->conf->agent.on)
        return containers_list(&w->dk, w->id.worker_id, v, n, err, len);
    if (agent_list(v, n) == 0)
        return 0;
    snprintf(err, len, "out of memory listing the sessions");
    return -1;
}

void reconcile(struct worker *w)
{
    struct ctr_state *v = NULL;
    char err[256];
    int n = 0;

    hostcaps_recheck(w, 0);
    if (list_sandboxes(w, &v, &n, err, sizeof(err)) != 0) {
        if (!w->docker_down)
            log_warn("dockerd: %s; reports paused until it answers", err);
        w->docker_down = 1;
        return;
    }
    if (w->docker_down || atomic_exchange(&w->docker_back, 0)) {
        log_info("dockerd answers; reporting every sandbox");
        w->need_full = 1;
        w->sweep_nets = !w->conf->agent.on; /* a removal asked as it went down may be undone */
    }
    w->docker_down = 0;
    for (int i = 0; i < w->table.n; i++)
        w->table.v[i].seen = 0;
    for (int i = 0; i < n; i++) {
        note_change(sbtable_get(&w->table, v[i].sbid), &v[i]);
        if (sbtable_put(&w->table, &v[i]) != 0)
            log_sandbox("error", v[i].sbid, v[i].tier, "out of memory recording it");
    }
    free(v);
    mark_vanished(w);
    if (containers_networks_refused()) /* a kill's or reap's: its sandbox is gone */
        w->sweep_nets = !w->conf->agent.on;
    if (w->sweep_nets &&
        !inflight_busy()) /* no create of another thread between net and container */
        w->sweep_nets = netsweep_orphans(&w->dk, w->id.worker_id) < 0;
}
