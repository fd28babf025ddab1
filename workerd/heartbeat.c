/* heartbeat.c: the long-poll loop of the control channel.
 *
 * Each round: reconcile with dockerd, send acks and state changes (or all of
 * them, "full", after any break in contact), wait for commands, apply them.
 * Acks and changes are forgotten only after a 200: a poll that failed in
 * flight may or may not have been seen, and sending an ack or a state twice is
 * harmless (XACK and state reports are idempotent), losing one is not.
 * SIGTERM lets the poll in flight finish, then exits without applying what it
 * brought: those commands stay unacknowledged and come again on resume. */
#include "worker.h"

#include "agent.h"
#include "poller.h"

#include "clock.h"
#include "log.h"
#include "warm_pool.h"

#include <string.h>

json_t *heartbeat_report_of(const struct sb_entry *e)
{
    json_t *o = json_pack("{s:s, s:s}", "id", e->st.sbid, "state", sb_state_name(e->st.state));

    if (o && e->st.reason[0])
        json_object_set_new(o, "reason", json_string(e->st.reason));
    return o;
}

/* "wait": false when we still have commands to apply: the control plane then
 * answers at once, so the acks so far go out and we get back to work. (A
 * short client-side timeout would abandon the poll instead, and its handler,
 * still blocked in Redis, would take the next command with it.) Never while
 * the poller thread long-polls for us (decision 0084). */
static json_t *build_body(struct worker *w)
{
    json_t *sbs = json_array();
    char problem[256];

    for (int i = 0; i < w->table.n; i++) {
        const struct sb_entry *e = &w->table.v[i];
        int full_ok = !w->docker_down && e->st.state != SB_FAILED;
        if (e->dirty || (w->need_full && full_ok))
            json_array_append_new(sbs, heartbeat_report_of(e));
    }
    health_problem(w, problem, sizeof(problem));
    json_t *body =
        json_pack("{s:O, s:o, s:b, s:b, s:b, s:s, s:O, s:O}", "acks", w->acks, "sandboxes", sbs,
                  "full", w->need_full && !w->docker_down, "resume", w->resume, "wait",
                  !poller_running() && json_array_size(w->backlog) == 0, "problem", problem,
                  "snapshots", w->snap_reports, "killed", w->killed);
    if (body && w->conf->n_warm > 0)
        json_object_set_new(body, "warm", warm_pool_view());
    return body;
}

/* A container that exited and whose exit the control plane has heard of is
 * removed: the control plane sends no kill for a sandbox that ended on its
 * own, so without this stopped containers would pile up on the host. One
 * that cannot be removed now stays in the table, exited, and is tried again
 * after the next heartbeat. */
static void reap_exited(struct worker *w, json_t *sbids)
{
    json_t *v;
    size_t i;
    char err[256] = "";

    json_array_foreach(sbids, i, v)
    {
        const char *sbid = json_string_value(v);
        struct sb_entry *e = sbtable_get(&w->table, sbid);
        if (!e || e->st.state != SB_EXITED)
            continue;
        if (w->conf->agent.on
                ? agent_kill(w->conf, sbid) != 0
                : containers_kill(&w->dk, w->id.worker_id, sbid, err, sizeof(err)) != 0) {
            log_sandbox("warn", sbid, e->st.tier, "removing exited container: %s", err);
            continue;
        }
        log_sandbox("info", sbid, e->st.tier, "exit reported, container removed");
        sbtable_del(&w->table, sbid);
    }
}

/* After a 200: what that heartbeat carried has been told. */
static void forget_told(struct worker *w, size_t n_acks, size_t n_snaps, size_t n_killed)
{
    json_t *exited = json_array();

    for (size_t i = 0; i < n_acks; i++)
        json_array_remove(w->acks, 0);
    for (size_t i = 0; i < n_killed; i++)
        json_array_remove(w->killed, 0);
    for (size_t i = 0; i < n_snaps; i++)
        json_array_remove(w->snap_reports, 0);
    pthread_mutex_lock(&w->table.mu);
    for (int i = 0; i < w->table.n;) {
        struct sb_entry *e = &w->table.v[i];
        if (e->drop && e->dirty) {
            *e = w->table.v[--w->table.n];
            continue;
        }
        /* Every exited one, not only those told just now: a removal that
         * failed (dockerd going down as its containers died) is tried again,
         * and its container never outlives the sandbox (issue 34). */
        if (e->st.state == SB_EXITED)
            json_array_append_new(exited, json_string(e->st.sbid));
        e->dirty = 0;
        i++;
    }
    pthread_mutex_unlock(&w->table.mu);
    if (!w->docker_down)
        w->need_full = 0;
    w->resume = 0;
    if (!w->docker_down)
        reap_exited(w, exited);
    json_decref(exited);
}

/* Applies the creates (or kills) at the head of the backlog together,
 * acknowledging each applied one. The number taken, or -1 when dockerd was
 * unreachable (the backlog is dropped: the unacknowledged commands come again). */
static int apply_head_batch(struct worker *w)
{
    int results[APPLY_PARALLEL], n = apply_batch_parallel(w, w->backlog, results), failed = 0;

    for (int i = 0; i < n; i++) {
        json_t *cmd = json_array_get(w->backlog, (size_t)i);
        const char *id = json_string_value(json_object_get(cmd, "id"));
        const char *sbid = json_string_value(json_object_get(cmd, "sandbox_id"));
        if (results[i] != 0)
            failed = 1;
        else if (id)
            json_array_append_new(w->acks, json_string(id));
        /* A kill's caller waits for this (decision 0073). */
        if (results[i] == 0 && sbid && command_of(cmd) == CMD_KILL)
            json_array_append_new(w->killed, json_string(sbid));
    }
    if (failed) {
        json_array_clear(w->backlog);
        json_array_clear(w->arrived);
        return -1;
    }
    for (int i = 0; i < n; i++)
        json_array_remove(w->backlog, 0);
    /* After the acks were noted: a command of this batch brought again
     * meanwhile is dropped, not applied a second time. */
    backlog_merge(w->backlog, w->acks, w->arrived);
    json_array_clear(w->arrived);
    return n;
}

/* Applies the backlog, then what this answer brought, for at most a quarter
 * of the lease: a big batch must not keep us from heartbeating, or the
 * control plane declares us dead while we work. What is left waits in the
 * backlog for the next round, after a heartbeat that carries the acks so far. */
static void apply_all(struct worker *w, json_t *cmds)
{
    json_t *cmd;
    int64_t deadline = clock_now_ms() + w->lease_ms / 4;

    commands_arrived(cmds);
    backlog_merge(w->backlog, w->acks, cmds);
    apply_order(w->backlog);
    while (json_array_size(w->backlog) > 0 && clock_now_ms() < deadline && !*w->stop) {
        const char *id;
        int rc, taken = apply_head_batch(w);
        /* After a batch, report it at once (the next poll does not wait while
         * a backlog remains): a create's caller should not wait for the rest. */
        if (taken != 0)
            return;
        cmd = json_incref(json_array_get(w->backlog, 0));
        id = json_string_value(json_object_get(cmd, "id"));
        lease_blocked(w, 1);
        rc = apply_command(w, cmd);
        lease_blocked(w, 0);
        if (rc != 0) {
            json_decref(cmd);
            json_array_clear(w->backlog); /* dockerd is unreachable: they will come again */
            return;
        }
        if (id)
            json_array_append_new(w->acks, json_string(id));
        json_array_remove(w->backlog, 0);
        json_decref(cmd);
        /* The pauses and resumes ahead of a batch are reported before it
         * starts: their callers must not wait for other sandboxes' work. */
        if (apply_batchable(json_array_get(w->backlog, 0)))
            return;
    }
}

void arrived_from_poller(struct worker *w)
{
    json_t *cmds = json_array();

    poller_take(cmds);
    arrived_merge(w->arrived, w->backlog, w->acks, cmds);
    json_decref(cmds);
}

/* Nothing to apply, tell or ask: the main thread may wait for the poller. */
static int idle(const struct worker *w)
{
    return poller_running() && !poller_has_news() && json_array_size(w->backlog) == 0 &&
           json_array_size(w->acks) == 0 && json_array_size(w->killed) == 0 &&
           json_array_size(w->snap_reports) == 0 && !w->need_full && !w->resume;
}

void heartbeat_keepalive(struct worker *w)
{
    json_t *body = json_pack("{s:[], s:[], s:b, s:b, s:b}", "acks", "sandboxes", "full", 0,
                             "resume", 0, "wait", 0),
           *ans = NULL;
    long status = 0;
    char err[512];

    if (!body)
        return;
    lease_contact(w);
    if (control_post(&w->ctl, "/v1/worker/heartbeat", body, &w->id, w->lease_ms, &status, &ans, err,
                     sizeof(err)) != 0)
        log_warn("heartbeat (keepalive): %s", err);
    else if (status == 200) { /* applied after the batch, whose threads read the backlog */
        commands_arrived(json_object_get(ans, "commands"));
        arrived_merge(w->arrived, w->backlog, w->acks, json_object_get(ans, "commands"));
    }
    json_decref(body);
    json_decref(ans);
}

/* One heartbeat. 0 answered, 1 transport failure, 3 re-enrol. */
static int beat(struct worker *w)
{
    json_t *body = build_body(w), *ans = NULL;
    size_t n_acks = json_array_size(w->acks), n_snaps = json_array_size(w->snap_reports);
    size_t n_killed = json_array_size(w->killed);
    char err[512];
    long status = 0;
    int rc;

    if (!body)
        return 1;
    lease_contact(w);
    rc = control_post(&w->ctl, "/v1/worker/heartbeat", body, &w->id,
                      w->poll_ms + CONTROL_POLL_SLACK_MS, &status, &ans, err, sizeof(err));
    json_decref(body);
    if (rc != 0) {
        log_warn("heartbeat: %s", err);
        return 1;
    }
    if (status == 200) {
        json_int_t retry = json_integer_value(json_object_get(ans, "retry_after_ms"));
        forget_told(w, n_acks, n_snaps, n_killed);
        if (!*w->stop)
            apply_all(w, json_object_get(ans, "commands"));
        json_decref(ans);
        /* The control plane holds few long-polls open; when full it asks us to wait. */
        if (retry > 0)
            sleep_unless_stopped(retry > 60000 ? 60000 : (long)retry, w->stop);
        return 0;
    }
    log_warn("heartbeat answered %ld: %s", status,
             json_string_value(json_object_get(ans, "message")) ?: "(no message)");
    json_decref(ans);
    return status == 410 || status == 403 ? 3 : 1;
}

/* What the poller brought is applied at once, as a long-poll's answer was:
 * whether the heartbeat that then tells it gets through or not. */
static void apply_from_poller(struct worker *w)
{
    json_t *cmds = json_array();

    poller_take(cmds);
    if (json_array_size(cmds) > 0 && !*w->stop)
        apply_all(w, cmds);
    json_decref(cmds);
}

void heartbeat_run(struct worker *w)
{
    struct backoff b;

    backoff_init(&b, 500, w->conf->backoff_max_ms);
    if (poller_start(w) != 0)
        log_warn("poller thread did not start: the main thread long-polls, and a command that "
                 "comes during a batch waits for its next look");
    while (!*w->stop) {
        int rc;

        lease_blocked(w, 1);
        reconcile(w);
        lease_blocked(w, 0);
        /* The control plane placed the poller's commands on what it was told:
         * what changed since (a stray found, a sandbox died) is told first,
         * and the kills it answers go with them. */
        if (!sbtable_any_dirty(&w->table))
            apply_from_poller(w);
        rc = beat(w);
        if (rc != 3)
            apply_from_poller(w); /* told or not, as a long-poll's answer was */
        if (rc == 0) {
            backoff_reset(&b);
            if (idle(w)) /* until a command comes, or the next round's reconcile */
                poller_wait(w->poll_ms, w->stop);
            continue;
        }
        /* Contact broken: whatever we said may be lost, so say all of it again. */
        w->need_full = 1;
        if (rc == 3 && enrol(w) != 0)
            break;
        if (rc == 3)
            poller_kick(); /* its poll is the old identity's */
        if (rc == 1 && sleep_unless_stopped(backoff_next(&b), w->stop))
            break;
    }
    poller_stop();
}
