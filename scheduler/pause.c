#include "pause.h"

#include "audit.h"
#include "clock.h"
#include "commands.h"
#include "keys.h"
#include "lifecycle.h"
#include "log.h"
#include "sandbox_store.h"
#include "worker_store.h"

#include <stdio.h>
#include <string.h>

/* Waits until the record is in state want: the worker's report wakes us, and
 * the record is read after every slice, so that a wake another waiter took is
 * not missed. */
static enum life_outcome wait_state(struct rconn *rc, const char *ws, const char *sbid,
                                    const char *want, int wait_ms, char *why, size_t whylen)
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
                     : found              ? rec.state
                                          : "removed");
            if (found)
                sandbox_record_free(&rec);
            return LIFE_FAILED;
        }
        found = strcmp(rec.state, want) == 0;
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

/* Tells the worker; a dead one's sandboxes are declared lost by the sweep. */
static void tell_worker(struct rconn *rc, const struct sandbox_transition *t, const char *sbid,
                        int freeze)
{
    if (worker_is_alive(rc, t->pool, t->worker) == 1)
        command_send_freeze(rc, t->pool, t->worker, sbid, freeze);
}

/* The outcome a refusing state stands for. */
static enum life_outcome refused_by(const char *state, const char *done_state)
{
    if (strcmp(state, done_state) == 0)
        return LIFE_ALREADY;
    if (strcmp(state, "pending") == 0 || sandbox_state_live(state))
        return LIFE_BUSY;
    return LIFE_ABSENT;
}

enum life_outcome sandbox_pause(struct rconn *rc, const struct sched_conf *c, const char *ws,
                                const char *sbid, const char *actor, int wait_ms, char *why,
                                size_t whylen)
{
    struct sandbox_transition t;

    if (sandbox_mark_pausing(rc, ws, sbid, (long long)clock_now_ms() + c->paused_max_ms, &t) != 0)
        return LIFE_STORE_DOWN;
    if (strcmp(t.outcome, "pausing") == 0)
        return LIFE_ALREADY; /* asked already: the worker is on it */
    if (strcmp(t.outcome, "ok") != 0)
        return refused_by(t.outcome, "paused");
    audit_sandbox(rc, ws, sbid, AUDIT_PAUSE_REQUESTED, actor, NULL);
    tell_worker(rc, &t, sbid, 1);
    return wait_state(rc, ws, sbid, "paused", wait_ms, why, whylen);
}

enum life_outcome sandbox_resume(struct rconn *rc, const struct sched_conf *c, const char *ws,
                                 const char *sbid, const char *actor, long timeout_s, int wait_ms,
                                 long *limit, char *why, size_t whylen)
{
    long long reserve = (long long)clock_now_ms() + c->create_timeout_ms + c->grace_ms;
    struct sandbox_transition t;
    enum life_outcome o;

    if (sandbox_mark_resuming(rc, ws, sbid, reserve, c->ceilings[WS_LIMIT_MAX_CONCURRENT],
                              timeout_s, &t) != 0)
        return LIFE_STORE_DOWN;
    if (strcmp(t.outcome, "pausing") == 0) {
        /* A pause still under way: let it finish, then resume once. */
        o = wait_state(rc, ws, sbid, "paused", wait_ms, why, whylen);
        if (o != LIFE_DONE)
            return o;
        if (sandbox_mark_resuming(rc, ws, sbid, reserve, c->ceilings[WS_LIMIT_MAX_CONCURRENT],
                                  timeout_s, &t) != 0)
            return LIFE_STORE_DOWN;
    }
    *limit = t.limit;
    if (strcmp(t.outcome, "over_limit") == 0) {
        audit_sandbox(rc, ws, sbid, AUDIT_REFUSED, actor,
                      "resume: the workspace's concurrent sandbox limit is reached");
        return LIFE_OVER_LIMIT;
    }
    if (strcmp(t.outcome, "resuming") == 0) /* another resume is on it */
        return wait_state(rc, ws, sbid, "running", wait_ms, why, whylen);
    if (strcmp(t.outcome, "ok") != 0)
        return refused_by(t.outcome, "running");
    audit_sandbox(rc, ws, sbid, AUDIT_RESUME_REQUESTED, actor, NULL);
    tell_worker(rc, &t, sbid, 0);
    return wait_state(rc, ws, sbid, "running", wait_ms, why, whylen);
}

int sweep_timeouts(struct rconn *rc, const struct sched_conf *c, const char *ws)
{
    char key[128];
    struct sandbox_transition t;
    redisReply *r;
    int n = 0;

    snprintf(key, sizeof(key), K_TIMEOUTS, ws);
    r = rconn_cmd(rc, 0, "ZRANGEBYSCORE %s -inf %lld LIMIT 0 100", key, (long long)clock_now_ms());
    if (!r)
        return -1;
    for (size_t i = 0; i < r->elements; i++) {
        const char *sbid = r->element[i]->str;
        long long hold = (long long)clock_now_ms() + c->paused_max_ms;
        if (sandbox_timeout_claim(rc, ws, sbid, hold, &t) != 0)
            break;
        if (strcmp(t.outcome, "pause") == 0) {
            audit_sandbox(rc, ws, sbid, AUDIT_PAUSE_REQUESTED, AUDIT_ACTOR_SCHEDULER, "timeout");
            tell_worker(rc, &t, sbid, 1);
            log_about("info", &(struct log_about){.workspace = ws, .sandbox = sbid},
                      "timeout: pausing");
            n++;
        } else if (strcmp(t.outcome, "kill") == 0 &&
                   sandbox_kill(rc, ws, sbid, AUDIT_TIMED_OUT, AUDIT_ACTOR_SCHEDULER, "timeout") ==
                       1) {
            log_about("info", &(struct log_about){.workspace = ws, .sandbox = sbid},
                      "killed: timeout");
            n++;
        }
    }
    freeReplyObject(r);
    return n;
}
