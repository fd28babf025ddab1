#include "pause.h"

#include "audit.h"
#include "clock.h"
#include "commands.h"
#include "lifecycle.h"
#include "log.h"
#include "sandbox_store.h"
#include "worker_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Waits until the record is in state want: the worker's report wakes us, and
 * the record is read after every slice, so that a wake another waiter took is
 * not missed. */
static enum life_outcome wait_state(struct rconn *rc, const char *ws, const char *sbid,
                                    enum sandbox_state want, int wait_ms, char *why, size_t whylen)
{
    long long deadline = (long long)clock_now_ms() + wait_ms;
    struct sandbox_record rec;
    char msg[300];

    for (;;) {
        int found = sandbox_read(rc, ws, sbid, &rec);
        if (found < 0)
            return LIFE_STORE_DOWN;
        if (found == 0 || !sandbox_is_live(&rec)) {
            snprintf(why, whylen, "the sandbox ended: %s",
                     found && *rec.reason ? rec.reason
                     : found              ? sandbox_state_shown(&rec)
                                          : "removed");
            if (found)
                sandbox_record_free(&rec);
            return LIFE_FAILED;
        }
        found = rec.state == want;
        sandbox_record_free(&rec);
        if (found)
            return LIFE_DONE;
        long long left = deadline - (long long)clock_now_ms();
        if (left <= 0)
            return LIFE_SLOW;
        if (sandbox_wait_wake(rc, ws, sbid, left < 1000 ? (int)left : 1000, msg, sizeof(msg)) < 0)
            return LIFE_STORE_DOWN;
    }
}

/* Tells the worker; a dead one's sandboxes are declared lost by the sweep.
 * Only what differs from a freeze or a thaw goes as args: an older worker
 * then does no less than freeze (decision 0074). */
static void tell_worker(struct rconn *rc, const struct sandbox_transition *t, const char *ws,
                        const char *sbid, int freeze)
{
    json_t *args = NULL;

    if (!t->keep_memory || t->egress) {
        args = json_object();
        if (!t->keep_memory)
            json_object_set_new(args, "memory", json_false());
        /* Its secrets are sealed to the workspace: the heartbeat opens them. */
        if (t->egress)
            json_object_set_new(args, "egress", sandbox_json_field(t->egress, "null"));
        if (t->egress)
            json_object_set_new(args, "workspace", json_string(ws));
    }
    if (worker_is_alive(rc, t->pool, t->worker) == 1)
        command_send_freeze(rc, t->pool, t->worker, sbid, freeze, args);
    else
        json_decref(args);
}

/* The outcome a refusal stands for: by the state it was to reach, already
 * done; by another live (or pending) state, busy; else (no record, or ended)
 * absent. */
static enum life_outcome refused_by(const struct sandbox_transition *t,
                                    enum sandbox_state done_state)
{
    if (t->outcome != TRANSITION_REFUSED)
        return LIFE_ABSENT;
    if (t->refused == done_state)
        return LIFE_ALREADY;
    if (t->refused == SANDBOX_STATE_PENDING || sandbox_state_is_live(t->refused))
        return LIFE_BUSY;
    return LIFE_ABSENT;
}

/* Refused because a pause is under way (it refuses a pause and a resume alike). */
static int refused_pausing(const struct sandbox_transition *t)
{
    return t->outcome == TRANSITION_REFUSED && t->refused == SANDBOX_STATE_PAUSING;
}

enum life_outcome sandbox_pause(struct rconn *rc, const struct sched_conf *c, const char *ws,
                                const char *sbid, const char *actor, int keep_memory, int wait_ms,
                                char *why, size_t whylen)
{
    struct sandbox_transition t;

    if (sandbox_mark_pausing(rc, ws, sbid, (long long)clock_now_ms() + c->paused_max_ms,
                             keep_memory, &t) != 0)
        return LIFE_STORE_DOWN;
    if (refused_pausing(&t))
        return LIFE_ALREADY; /* asked already: the worker is on it */
    if (t.outcome != TRANSITION_OK)
        return refused_by(&t, SANDBOX_STATE_PAUSED);
    audit_sandbox(rc, ws, sbid, AUDIT_PAUSE_REQUESTED, actor,
                  t.keep_memory ? NULL : "without memory");
    tell_worker(rc, &t, ws, sbid, 1);
    return wait_state(rc, ws, sbid, SANDBOX_STATE_PAUSED, wait_ms, why, whylen);
}

/* A resume is refused when the policy recorded while paused adds or removes
 * the proxy and the sandbox is to keep its memory: its processes hold the
 * network they had (decision 0074). why says what to do instead. */
static enum life_outcome network_refusal(const char *sbid, const char *change, char *why,
                                         size_t whylen)
{
    snprintf(why, whylen,
             "sandbox %s was paused with its memory, and a resume that keeps it keeps the "
             "network its processes hold; the network policy recorded since %s an egress policy, "
             "which needs a fresh start: resume it with memory false (the SDK's connect "
             "onResume 'reboot'), or record its current policy again",
             sbid, strcmp(change, "add") == 0 ? "adds" : "removes");
    return LIFE_NETWORK;
}

/* paused -> resuming, once a pause still under way has finished. */
static enum life_outcome mark_resuming(struct rconn *rc, const struct sched_conf *c, const char *ws,
                                       const char *sbid, long timeout_s, int fresh, int wait_ms,
                                       struct sandbox_transition *t, char *why, size_t whylen)
{
    long long reserve = (long long)clock_now_ms() + c->create_timeout_ms + c->grace_ms;
    enum life_outcome o;

    if (sandbox_mark_resuming(rc, ws, sbid, reserve, c->ceilings[WS_LIMIT_MAX_CONCURRENT],
                              timeout_s, fresh, t) != 0)
        return LIFE_STORE_DOWN;
    if (!refused_pausing(t))
        return LIFE_DONE;
    /* A pause still under way: let it finish, then resume once. */
    o = wait_state(rc, ws, sbid, SANDBOX_STATE_PAUSED, wait_ms, why, whylen);
    if (o != LIFE_DONE)
        return o;
    if (sandbox_mark_resuming(rc, ws, sbid, reserve, c->ceilings[WS_LIMIT_MAX_CONCURRENT],
                              timeout_s, fresh, t) != 0)
        return LIFE_STORE_DOWN;
    return LIFE_DONE;
}

enum life_outcome sandbox_resume(struct rconn *rc, const struct sched_conf *c, const char *ws,
                                 const char *sbid, const char *actor, long timeout_s, int fresh,
                                 int wait_ms, long *limit, char *why, size_t whylen)
{
    struct sandbox_transition t = {0};
    enum life_outcome o =
        mark_resuming(rc, c, ws, sbid, timeout_s, fresh, wait_ms, &t, why, whylen);

    if (o != LIFE_DONE) {
        free(t.egress);
        return o;
    }
    *limit = t.limit;
    if (t.outcome == TRANSITION_OVER_LIMIT) {
        audit_sandbox(rc, ws, sbid, AUDIT_REFUSED, actor,
                      "resume: the workspace's concurrent sandbox limit is reached");
        o = LIFE_OVER_LIMIT;
    } else if (t.outcome == TRANSITION_NETWORK) {
        audit_sandbox(rc, ws, sbid, AUDIT_REFUSED, actor,
                      "resume: a network change that needs a fresh start");
        o = network_refusal(sbid, t.egress ? t.egress : "", why, whylen);
    } else if (t.outcome == TRANSITION_REFUSED && t.refused == SANDBOX_STATE_RESUMING) {
        /* another resume is on it */
        o = wait_state(rc, ws, sbid, SANDBOX_STATE_RUNNING, wait_ms, why, whylen);
    } else if (t.outcome != TRANSITION_OK) {
        o = refused_by(&t, SANDBOX_STATE_RUNNING);
    } else {
        audit_sandbox(rc, ws, sbid, AUDIT_RESUME_REQUESTED, actor,
                      t.keep_memory ? NULL : "without memory");
        tell_worker(rc, &t, ws, sbid, 0);
        o = wait_state(rc, ws, sbid, SANDBOX_STATE_RUNNING, wait_ms, why, whylen);
    }
    free(t.egress);
    return o;
}

int sweep_timeouts(struct rconn *rc, const struct sched_conf *c, const char *ws)
{
    struct sandbox_transition t;
    struct id_list due;
    int n = 0;

    if (sandbox_due(rc, ws, SANDBOX_DUE_TIMEOUT, &due) != 0)
        return -1;
    for (size_t i = 0; i < due.n; i++) {
        const char *sbid = due.id[i];
        long long hold = (long long)clock_now_ms() + c->paused_max_ms;
        if (sandbox_timeout_claim(rc, ws, sbid, hold, &t) != 0)
            break;
        if (t.outcome == TRANSITION_PAUSE) {
            audit_sandbox(rc, ws, sbid, AUDIT_PAUSE_REQUESTED, AUDIT_ACTOR_SCHEDULER,
                          t.keep_memory ? "timeout" : "timeout, without memory");
            tell_worker(rc, &t, ws, sbid, 1);
            log_about("info", &(struct log_about){.workspace = ws, .sandbox = sbid},
                      "timeout: pausing");
            n++;
        } else if (t.outcome == TRANSITION_KILL &&
                   sandbox_kill(rc, ws, sbid, AUDIT_TIMED_OUT, AUDIT_ACTOR_SCHEDULER, "timeout") ==
                       1) {
            log_about("info", &(struct log_about){.workspace = ws, .sandbox = sbid},
                      "killed: timeout");
            n++;
        }
    }
    id_list_free(&due);
    return n;
}
