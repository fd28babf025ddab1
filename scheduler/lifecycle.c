#include "lifecycle.h"

#include "admission.h"
#include "audit.h"
#include "clock.h"
#include "commands.h"
#include "log.h"
#include "placement.h"
#include "sandbox_store.h"
#include "scheduler.h"
#include "worker_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only the caller whose sandbox_remove deleted the record records the event;
 * the record is read first for its tier (the remove's reply has no tier). */
int sandbox_kill(struct rconn *rc, const char *ws, const char *sbid, const char *event,
                 const char *actor, const char *reason)
{
    struct kill_sent k = {.wait = 0};

    return sandbox_kill_sent(rc, ws, sbid, event, actor, reason, &k);
}

int sandbox_kill_sent(struct rconn *rc, const char *ws, const char *sbid, const char *event,
                      const char *actor, const char *reason, struct kill_sent *out)
{
    char worker[33], pool[33], wake[160];
    int wait = out->wait;
    struct sandbox_record rec;
    int had = sandbox_read(rc, ws, sbid, &rec);
    int found = sandbox_remove(rc, ws, sbid, worker, pool);
    struct audit_event e = {.event = event,
                            .actor = actor,
                            .sandbox = sbid,
                            .worker = worker,
                            .tier = had == 1 ? rec.tier : "",
                            .reason = reason};

    memset(out, 0, sizeof(*out));
    out->wait = wait;
    if (found == 1)
        audit_append(rc, ws, &e);
    if (had == 1)
        sandbox_record_free(&rec);
    if (found <= 0)
        return found;
    snprintf(wake, sizeof(wake), "failed:%s", reason);
    sandbox_wake(rc, ws, sbid, wake);
    if (worker[0]) {
        placement_release(rc, pool, worker, sbid);
        if (worker_is_alive(rc, pool, worker) == 1) {
            /* Expected before it is sent; a failure here costs the caller
             * only its wait's bound. */
            if (wait)
                command_kill_expect(rc, pool, worker, sbid);
            if (command_send_kill(rc, pool, worker, sbid) == 0) {
                snprintf(out->pool, sizeof(out->pool), "%s", pool);
                snprintf(out->worker, sizeof(out->worker), "%s", worker);
                out->sent = 1;
            }
        }
    }
    return 1;
}

/* The workspace a worker's sandbox belongs to, from the worker's map. */
static int sandbox_owner(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                         char ws[33])
{
    struct worker_slot slot;
    int found = worker_slot_get(rc, pool, wid, sbid, &slot);

    if (found == 1)
        snprintf(ws, 33, "%s", slot.ws);
    return found;
}

/* A report that changed something; a worker repeats "running" in every full
 * report, and those are not worth a line. */
static void log_report(enum report_outcome o, const char *ws, const char *sbid, const char *wid,
                       enum sandbox_reported reported, const char *reason)
{
    const char *state = sandbox_reported_name(reported);
    const struct log_about a = {.workspace = ws, .sandbox = sbid, .worker = wid};

    if (o == REPORT_STARTED || o == REPORT_PAUSED || o == REPORT_RESUMED)
        log_about("info", &a, "%s: reported by its worker",
                  o == REPORT_PAUSED    ? "paused"
                  : o == REPORT_RESUMED ? "resumed"
                                        : "running");
    else if (o == REPORT_STOPPED)
        log_about("info", &a, "%s: reported by its worker%s%.200s", state,
                  reason && *reason ? ": " : "", reason ? reason : "");
    else if (o == REPORT_KILL)
        log_about("warn", &a, "reported %s by a worker that does not hold it: killed there", state);
}

int lifecycle_report(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                     const char *state_word, const char *reason)
{
    char ws[33] = "", wake[300], actor[AUDIT_ACTOR_MAX];
    int was_pending = 0;
    enum report_outcome o;
    enum sandbox_reported reported = sandbox_reported_parse(state_word);
    const char *state = sandbox_reported_name(reported);

    if (sandbox_owner(rc, pool, wid, sbid, ws) <= 0) {
        /* Not assigned to this worker (deleted, moved, or never ours): stop it. */
        if (reported != SANDBOX_REPORTED_RUNNING && reported != SANDBOX_REPORTED_PAUSED)
            return 0;
        command_send_kill(rc, pool, wid, sbid);
        return 1;
    }
    o = sandbox_report(rc, ws, sbid, wid, reported, reason, &was_pending);
    audit_actor_worker(actor, wid);
    log_report(o, ws, sbid, wid, reported, reason);
    if (o == REPORT_STARTED || o == REPORT_PAUSED || o == REPORT_RESUMED)
        audit_sandbox(rc, ws, sbid,
                      o == REPORT_PAUSED    ? AUDIT_PAUSED
                      : o == REPORT_RESUMED ? AUDIT_RESUMED
                                            : AUDIT_RUNNING,
                      actor, NULL);
    else if (o == REPORT_STOPPED)
        audit_sandbox(rc, ws, sbid,
                      reported == SANDBOX_REPORTED_FAILED ? AUDIT_FAILED : AUDIT_EXITED, actor,
                      reason && *reason ? reason : state);
    if (o == REPORT_STARTED || o == REPORT_RESUMED || o == REPORT_PAUSED) {
        sandbox_wake(
            rc, ws, sbid,
            sandbox_state_name(o == REPORT_PAUSED ? SANDBOX_STATE_PAUSED : SANDBOX_STATE_RUNNING));
    } else if (o == REPORT_STOPPED) {
        placement_release(rc, pool, wid, sbid);
        if (was_pending) {
            snprintf(wake, sizeof(wake), "failed:%s", reason && *reason ? reason : state);
            sandbox_wake(rc, ws, sbid, wake);
        }
    } else if (o == REPORT_KILL) {
        placement_release(rc, pool, wid, sbid);
        command_send_kill(rc, pool, wid, sbid);
        return 1;
    }
    return 0;
}

static void orphan_one(struct rconn *rc, const struct sched_conf *c, const char *pool,
                       const char *wid, const char *sbid, const char *ws, const char *actor)
{
    char why[320];
    enum orphan_decision what;
    struct sched_error err;

    if (sandbox_orphan(rc, ws, sbid, wid, &what) != 0)
        return;
    if (what == ORPHAN_LOST)
        audit_sandbox(rc, ws, sbid, AUDIT_LOST, actor, "its worker died");
    if (what == ORPHAN_REPLACE && scheduler_replace(rc, c, ws, sbid, wid, &err) != 0) {
        log_about("warn", &(struct log_about){.workspace = ws, .sandbox = sbid, .worker = wid},
                  "its worker died and it could not be placed again: %s", err.message);
        snprintf(why, sizeof(why), "its worker died and it could not be placed again: %s",
                 err.message);
        sandbox_kill(rc, ws, sbid, AUDIT_LOST, actor, why);
    }
    worker_slot_forget(rc, pool, wid, sbid);
}

int worker_declare_dead(struct rconn *rc, const struct sched_conf *c, const char *pool,
                        const char *wid, int force, const char *actor)
{
    struct worker_sandboxes sbs;
    int claimed = worker_claim_death(rc, pool, wid, (long long)clock_now_ms(), force);
    struct audit_event e = {.event = AUDIT_WORKER_DEAD,
                            .actor = actor,
                            .worker = wid,
                            .reason = force ? "removed" : "its lease ran out"};

    if (claimed <= 0)
        return claimed;
    log_about("warn", &(struct log_about){.worker = wid},
              "worker dead (pool '%s'): placing its pending sandboxes again", pool);
    audit_append(rc, pool, &e);
    if (worker_sandboxes(rc, pool, wid, &sbs) == 0) {
        for (size_t i = 0; i < sbs.n; i++) /* ws "" if the entry is malformed */
            orphan_one(rc, c, pool, wid, sbs.v[i].sbid, sbs.v[i].slot.ws, actor);
        worker_sandboxes_free(&sbs);
    }
    /* Its commands were re-sent elsewhere; a returning worker starts afresh. */
    command_stream_drop(rc, pool, wid);
    return 1;
}

int sweep_dead_workers(struct rconn *rc, const struct sched_conf *c, const char *pool)
{
    struct worker_ids ids;
    int n = 0;

    if (worker_expired(rc, pool, (long long)clock_now_ms(), &ids) != 0)
        return -1;
    for (size_t i = 0; i < ids.n; i++)
        n += worker_declare_dead(rc, c, pool, ids.id[i], 0, AUDIT_ACTOR_SCHEDULER) == 1;
    worker_ids_free(&ids);
    return n;
}

static int sweep_kill(struct rconn *rc, const char *ws, const char *event, const char *reason)
{
    struct id_list due;
    int n = 0;

    if (sandbox_due(rc, ws, SANDBOX_DUE_CREATE, &due) != 0)
        return -1;
    for (size_t i = 0; i < due.n; i++)
        if (sandbox_kill(rc, ws, due.id[i], event, AUDIT_ACTOR_SCHEDULER, reason) == 1) {
            log_about("info", &(struct log_about){.workspace = ws, .sandbox = due.id[i]},
                      "killed: %s", reason);
            n++;
        }
    id_list_free(&due);
    return n;
}

int sweep_abandoned_creates(struct rconn *rc, const char *ws)
{
    return sweep_kill(rc, ws, AUDIT_ABANDONED, "no worker started it in time");
}

/* A create whose waiting handler stopped renewing its lease (it crashed, or
 * its process was killed): nobody will receive the answer, so the sandbox is
 * killed and its slot given back (handlers/create_wait.c). The entry is taken
 * by ZREM first, so of several corral-sched copies only one kills it. */
int sweep_abandoned_waits(struct rconn *rc, const char *ws)
{
    struct id_list due;
    int n = 0;

    if (sandbox_due(rc, ws, SANDBOX_DUE_WAITER, &due) != 0)
        return -1;
    for (size_t i = 0; i < due.n; i++) {
        const char *sbid = due.id[i];
        if (sandbox_wait_take(rc, ws, sbid) == 1 &&
            sandbox_kill(rc, ws, sbid, AUDIT_ABANDONED, AUDIT_ACTOR_SCHEDULER,
                         "nobody was left waiting for its create") == 1) {
            log_about("info", &(struct log_about){.workspace = ws, .sandbox = sbid},
                      "killed: create abandoned by its handler");
            n++;
        }
    }
    id_list_free(&due);
    return n;
}

/* One worker's slots held for sandboxes that are not there: given back. */
static int sweep_one_worker(struct rconn *rc, const char *pool, const char *wid, long min_age_ms)
{
    struct worker_sandboxes sbs;
    int n = 0;

    if (worker_sandboxes(rc, pool, wid, &sbs) != 0)
        return 0;
    for (size_t i = 0; i < sbs.n; i++) {
        const struct worker_sandbox *e = &sbs.v[i];
        if (!e->valid || clock_now_ms() - e->slot.since_ms < min_age_ms ||
            sandbox_worker_is(rc, e->slot.ws, e->sbid, wid) != 0)
            continue;
        n += placement_release(rc, pool, wid, e->sbid) == 1;
        command_send_kill(rc, pool, wid, e->sbid);
    }
    worker_sandboxes_free(&sbs);
    return n;
}

/* A slot a worker holds for a sandbox whose record is gone or points elsewhere
 * (a handler died between placement and record, a kill lost halfway) is given
 * back. min_age_ms spares entries of creates still in flight. */
int sweep_worker_slots(struct rconn *rc, const char *pool, long min_age_ms)
{
    struct worker_ids ids;
    int n = 0;

    if (worker_ids_all(rc, pool, &ids) != 0)
        return -1;
    for (size_t w = 0; w < ids.n; w++)
        n += sweep_one_worker(rc, pool, ids.id[w], min_age_ms);
    worker_ids_free(&ids);
    return n;
}
