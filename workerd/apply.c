/* apply.c: carrying out the control plane's commands (commands.c routes
 * each here).
 *
 * A command is acknowledged only once applied, so a crash between receiving
 * and applying means it comes again; applying is therefore idempotent by
 * sandbox id (Docker's unique container names do the work for create, and a
 * kill of what is gone succeeds). A create that can never succeed (unknown
 * template, missing image, runtime refused) is applied too: as a "failed"
 * report, so that the create ends rather than being delivered forever. */
#include "worker.h"

#include "agent.h"
#include "build_thread.h"
#include "dataplane.h"
#include "freeze.h"
#include "snapshots.h"
#include "subvol_drop.h"
#include "volumes.h"
#include "clock.h"
#include "log.h"

#include <stdio.h>
#include <string.h>

int apply_record(struct worker *w, const struct ctr_state *st)
{
    if (sbtable_record(&w->table, st, st->state == SB_FAILED) != 0) {
        log_sandbox("error", st->sbid, st->tier, "out of memory recording it");
        return -1;
    }
    return 0;
}

/* One slot per sandbox: the scheduler counts them, this is the backstop.
 * A sandbox being killed holds its slot until its container is gone, and one
 * being created from the moment its create took it: the host never runs
 * more sandbox containers than its slots (issue 34). Kills are applied ahead
 * of creates (apply_order), so a create placed in a slot a kill freed finds
 * it free. */
int apply_slot_free(struct worker *w, const char *sbid)
{
    return sbtable_has(&w->table, sbid) ||
           sbtable_count_running(&w->table) + atomic_load(&w->killing) + atomic_load(&w->creating) <
               w->conf->slots;
}

/* Checked and taken under one lock: creates applied in parallel (a batch's,
 * and those started while it runs, decision 0077) each saw the same count
 * and passed the backstop together (8 containers on 6 slots in the soak). */
int apply_slot_take(struct worker *w, const char *sbid)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    int ok;

    if (!sbid || !containers_id_ok(sbid))
        return -1;
    pthread_mutex_lock(&mu);
    ok = apply_slot_free(w, sbid);
    if (ok)
        atomic_fetch_add(&w->creating, 1);
    pthread_mutex_unlock(&mu);
    return ok;
}

void apply_slot_give(struct worker *w, int took)
{
    if (took == 1)
        atomic_fetch_sub(&w->creating, 1);
}

/* How long a create waits for envd: the configured bound, but never more than
 * a quarter of the lease, so that one broken image cannot make us miss it. */
long apply_envd_wait_ms(const struct worker *w)
{
    long cap = w->lease_ms > 0 ? w->lease_ms / 4 : w->conf->envd_ready_ms;

    return w->conf->envd_ready_ms < cap ? w->conf->envd_ready_ms : cap;
}

/* Each hop of a create that runs, for the operator and the benchmark's hop
 * table (issue 35): queued by the control plane (epoch ms), delivered here,
 * waiting here for its turn, then this worker's phases. */
static void log_running(const char *rt, json_t *sb, int64_t started, const struct ctr_state *st)
{
    int64_t arrived = json_integer_value(json_object_get(sb, ARRIVED_FIELD)) ?: started,
            queued = json_integer_value(json_object_get(sb, QUEUED_FIELD)) ?: arrived;

    log_sandbox("info", st->sbid, st->tier,
                "create (%s) -> running; queued at %lld, here %lld ms later, waited here %lld ms, "
                "then prepared %ld, warm pool %ld%s, network %ld, container %ld, start %ld, "
                "envd %ld ms",
                rt ? rt : "runc", (long long)queued, (long long)(arrived - queued),
                (long long)(started - arrived), st->phase_ms[CTR_PHASE_PREP],
                st->phase_ms[CTR_PHASE_CLAIM], st->claimed ? " (claimed)" : "",
                st->phase_ms[CTR_PHASE_NET], st->phase_ms[CTR_PHASE_CREATE],
                st->phase_ms[CTR_PHASE_START], st->phase_ms[CTR_PHASE_ENVD]);
}

/* apply_create once its slot is taken; slot 0: none was free (an unusable
 * id goes on: containers_create refuses it). */
static int create_in_slot(struct worker *w, struct docker *dk, json_t *sb, int slot)
{
    const char *rt = json_string_value(json_object_get(sb, "runtime"));
    int64_t started = clock_now_ms();
    struct ctr_state st;
    struct ctr_extras x = {0};
    int rc;

    if (!slot) {
        const char *sbid = json_string_value(json_object_get(sb, "id"));
        memset(&st, 0, sizeof(st));
        snprintf(st.sbid, sizeof(st.sbid), "%s", sbid);
        st.state = SB_FAILED;
        snprintf(st.reason, sizeof(st.reason), "no free slot (%ld in use)", w->conf->slots);
        snprintf(st.tier, sizeof(st.tier), "%s",
                 json_string_value(json_object_get(sb, "tier")) ?: "UNKNOWN");
        rc = 1;
    } else if (w->conf->agent.on) {
        rc = agent_create(w->conf, sb, apply_envd_wait_ms(w), &st);
    } else {
        pthread_mutex_lock(&w->id_mu);
        x.id = w->id; /* a registry image's pull token is asked with it */
        pthread_mutex_unlock(&w->id_mu);
        rc = containers_create(dk, w->conf, &w->caps, w->id.worker_id, sb, apply_envd_wait_ms(w),
                               &x, &st);
        explicit_bzero(&x.id, sizeof(x.id));
    }
    if (rc < 0)
        return -1;
    if (st.state == SB_RUNNING)
        log_running(rt, sb, started, &st);
    else
        log_sandbox("info", st.sbid[0] ? st.sbid : "?", st.tier, "create (%s) -> %s%s%s",
                    rt ? rt : "runc", sb_state_name(st.state), st.reason[0] ? ": " : "", st.reason);
    if (!st.sbid[0])
        return 0; /* nothing to report about an unusable id; the create is done */
    rc = apply_record(w, &st);
    if (rc == 0 && st.state == SB_RUNNING && x.plan.active)
        build_thread_start(w, sb, &x.plan, x.fresh); /* told running first, built after */
    return rc;
}

int apply_create_taken(struct worker *w, struct docker *dk, json_t *sb, int took)
{
    int rc = create_in_slot(w, dk, sb, took != 0);

    apply_slot_give(w, took); /* after the record: counted running from now on */
    return rc;
}

int apply_create(struct worker *w, struct docker *dk, json_t *sb)
{
    return apply_create_taken(w, dk, sb,
                              apply_slot_take(w, json_string_value(json_object_get(sb, "id"))));
}

/* Barred first: no request reaches it from here on, though dockerd still
 * lists it. Forgotten first: the "die" this causes is no news to report. Its
 * slot stays counted (w->killing) until the container is gone. The caller
 * waiting on the kill is told once its processes are dead, before dockerd's
 * removal (as long again, under load: issue 34). */
int apply_kill(struct worker *w, struct docker *dk, const char *sbid)
{
    char err[256] = "", tier[16] = "UNKNOWN";
    int64_t t0 = clock_now_ms(), stopped = -1;
    int rc, dropped;

    if (!sbid)
        return 0;
    sbtable_tier(&w->table, sbid, tier, sizeof(tier));
    dataplane_bar(sbid);
    build_thread_cancel(sbid);
    atomic_fetch_add(&w->killing, 1);
    sbtable_del(&w->table, sbid);
    if (!w->conf->agent.on && containers_halt(dk, w->id.worker_id, sbid, err, sizeof(err)) == 0) {
        stopped = clock_now_ms() - t0;
        report_killed_now(w, sbid);
    }
    subvol_drop_taken();
    rc = w->conf->agent.on ? agent_kill(w->conf, sbid)
                           : containers_kill(dk, w->id.worker_id, sbid, err, sizeof(err));
    atomic_fetch_sub(&w->killing, 1);
    if (rc != 0) {
        log_sandbox("warn", sbid, tier, "kill: %s", err);
        return -1;
    }
    dropped = subvol_drop_taken();
    /* "killed" last: it is the line about the sandbox that says it is over. */
    log_sandbox("info", sbid, tier,
                "kill: stopped and told after %lld ms, removed after %lld ms (subvolumes of %d "
                "container(s) dropped first)",
                (long long)stopped, (long long)(clock_now_ms() - t0), dropped);
    log_sandbox("info", sbid, tier, "killed");
    if (w->conf->agent.on)
        return 0;
    /* Only while a deleted snapshot's image waits for its last sandbox: a
     * kill costs dockerd nothing more otherwise. */
    if (atomic_load(&w->snap_dangling))
        atomic_store(&w->snap_dangling, snapshot_images_prune(dk, w->id.worker_id) > 0);
    return 0;
}

/* Pause (freeze 1) or resume: what the container then is gets recorded and
 * reported, so a refusal (the container died meanwhile) tells the truth too. */
int apply_freeze(struct worker *w, struct docker *dk, const char *sbid, int freeze)
{
    char err[256];
    struct ctr_state st;
    int rc;

    if (!sbid || !containers_id_ok(sbid))
        return 0;
    rc = freeze_sandbox(dk, w->id.worker_id, sbid, freeze, err, sizeof(err));
    if (rc < 0)
        return -1;
    dataplane_forget(sbid);
    memset(&st, 0, sizeof(st));
    snprintf(st.sbid, sizeof(st.sbid), "%s", sbid);
    snprintf(st.tier, sizeof(st.tier), "UNKNOWN");
    sbtable_tier(&w->table, sbid, st.tier, sizeof(st.tier));
    if (rc == 0) {
        st.state = freeze ? SB_PAUSED : SB_RUNNING;
    } else {
        log_sandbox("warn", sbid, st.tier, "%s", err);
        int found = containers_state(dk, w->id.worker_id, sbid, &st);
        if (found < 0)
            return -1;
        sbtable_tier(&w->table, sbid, st.tier, sizeof(st.tier));
        if (found == 1) {
            st.state = SB_EXITED;
            snprintf(st.reason, sizeof(st.reason), "container removed");
        }
    }
    log_sandbox("info", sbid, st.tier, "%s -> %s", freeze ? "pause" : "resume",
                sb_state_name(st.state));
    return apply_record(w, &st);
}

/* A snapshot is always answered, ready or failed, so its caller learns. */
int apply_snapshot(struct worker *w, struct docker *dk, const char *sbid, json_t *args)
{
    const char *id = json_string_value(json_object_get(args, "snapshot_id"));
    const char *image = json_string_value(json_object_get(args, "image"));
    const char *ws = json_string_value(json_object_get(args, "workspace"));
    char err[256] = "", tier[16] = "UNKNOWN";
    int rc;

    if (!id || !image || !ws || !sbid)
        return 0; /* nothing to answer to */
    sbtable_tier(&w->table, sbid, tier, sizeof(tier));
    rc = snapshot_commit(dk, w->id.worker_id, sbid, ws, image, err, sizeof(err));
    if (rc < 0)
        return -1;
    log_sandbox(rc ? "warn" : "info", sbid, tier, "snapshot %s -> %s%s%s", id,
                rc ? "failed" : "ready", rc ? ": " : "", err);
    json_array_append_new(w->snap_reports,
                          json_pack("{s:s, s:s, s:s, s:s}", "id", id, "workspace", ws, "state",
                                    rc ? "failed" : "ready", "reason", rc ? err : ""));
    return 0;
}

int apply_image_remove(struct worker *w, struct docker *dk, json_t *args)
{
    const char *image = json_string_value(json_object_get(args, "image"));
    char err[256];
    int rc;

    if (!image)
        return 0;
    rc = snapshot_image_remove(dk, w->id.worker_id, image, err, sizeof(err));
    if (rc < 0)
        return -1;
    if (rc > 0)
        log_warn("snapshot image %s: %s", image, err);
    else
        log_info("snapshot image %s removed", image);
    atomic_store(&w->snap_dangling, snapshot_images_prune(dk, w->id.worker_id) > 0);
    return 0;
}

int apply_volume_remove(struct worker *w, struct docker *dk, json_t *args)
{
    const char *name = json_string_value(json_object_get(args, "volume"));
    const char *ws = json_string_value(json_object_get(args, "workspace"));
    char err[256];
    int rc;

    if (!name || !ws)
        return 0;
    rc = volumes_remove(dk, w->id.worker_id, ws, name, err, sizeof(err));
    if (rc < 0)
        return -1;
    if (rc > 0)
        log_warn("volume %s: %s", name, err);
    else
        log_info("volume %s removed", name);
    return 0;
}
