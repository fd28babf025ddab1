/* apply_batch.c: creates (or kills) applied in parallel.
 *
 * A create is mostly waiting: on dockerd (create, start) and on envd's first
 * answer; a kill waits on dockerd's stop and remove. Applied one after another,
 * 20 of them take 20 times one; applied together they overlap, as 20 plain
 * `docker run`s would. Each thread has its own dockerd connection (a curl
 * handle is not shared between threads); the sandbox table has its own lock.
 * Only commands of one kind go together, so a kill never overtakes the create
 * of the same sandbox. */
#include "worker.h"

#include "poller.h"

#include "clock.h"
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

struct job {
    struct worker *w;
    json_t *cmd;
    int kind;
    int result;
    struct batch *batch;
    int ended; /* its command applied (under batch->mu) */
};

/* How many jobs of a batch are still running, for the main thread's wait. */
struct batch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running;
    int fresh;              /* a job ended since the last look: its create is told at once */
    const struct job *jobs; /* jobs[0..n): which of its sandboxes are done */
    int n;
};

static int apply_on(struct job *j, struct docker *dk)
{
    return apply_command_on(j->w, dk, j->cmd);
}

static void *run_job(void *arg)
{
    struct job *j = arg;
    struct docker dk = {0};

    if (docker_init(&dk, j->w->conf->docker_socket) != 0)
        j->result = -1;
    else
        j->result = apply_on(j, &dk);
    docker_close(&dk);
    pthread_mutex_lock(&j->batch->mu);
    j->ended = 1;
    j->batch->fresh = 1;
    j->batch->running--;
    pthread_cond_signal(&j->batch->cv);
    pthread_mutex_unlock(&j->batch->mu);
    return NULL;
}

/* How often the main thread looks while a batch runs, at least: a command
 * that comes (poller.c), a job that ends and one started early that ends
 * each bring a look at once; this one is for what waits its turn (a create
 * waiting for a slot, a start that failed). */
#define EARLY_POLL_MS 250

/* One look at what came while a batch (batch[0..n), the head of the
 * backlog) runs. */
struct look {
    json_t *batch;
    int n;
    int done;      /* the batch's jobs all ended: its commands hold nothing back */
    int starts;    /* 2 kills and creates may start, 1 kills only, 0 none */
    int checked;   /* the isolation rules were checked in this look */
    json_t *later; /* put off in this look */
    struct batch *b;
};

static void apply_early(struct worker *w, struct look *lk);

/* Once the batch is done, the commands of the backlog behind it join those
 * that arrived, ahead of them: they may start early too, rather than wait
 * for what started early (a create waited 15 s behind the kills it came
 * with). What is not applied goes back to the backlog with the rest after
 * the batch (apply_head_batch). */
static void release_backlog(struct worker *w, json_t *batch, int n)
{
    json_t *tail = json_array();

    while (batch == w->backlog && json_array_size(w->backlog) > (size_t)n) {
        json_array_append(tail, json_array_get(w->backlog, (size_t)n));
        json_array_remove(w->backlog, (size_t)n);
    }
    json_array_extend(tail, w->arrived);
    json_array_clear(w->arrived);
    json_array_extend(w->arrived, tail);
    json_decref(tail);
}

/* How long after a batch's end creates (and, twice as long, kills) may
 * still start early while what started early runs: the acks of what was
 * applied wait for the long-poll after this, and one that failed (dockerd
 * unreachable) is tried again at each look. Under the control plane's
 * redelivery of a command unacknowledged for 10 s (a redelivered one is not
 * applied twice, but costs a look). */
#define EARLY_STARTS_MS 5000

/* What may start early (struct look); done: when the batch ended, or -1. */
static int starts_since(int64_t done)
{
    int64_t t = done < 0 ? 0 : clock_now_ms() - done;

    return t < EARLY_STARTS_MS ? 2 : t < 2 * EARLY_STARTS_MS ? 1 : 0;
}

/* Waits for the batch's threads, and for the commands started early,
 * applying the pauses and resumes and starting the kills and creates that
 * came meanwhile (apply_early; not in agent mode, which has none); once the
 * batch is done, for as long as EARLY_STARTS_MS allows, then only collecting
 * what started. A command that comes, a job that ends and a command started
 * early that ends each bring the look at once: a caller is not kept waiting
 * for the tick. The lease is the lease thread's (decision 0076). */
static void await_batch(struct worker *w, struct batch *b, json_t *cmds, int n)
{
    int64_t done = -1;
    struct timespec until;
    int running, early = !w->conf->agent.on; /* an agent applies nothing early */

    inflight_wake_on(&b->mu, &b->cv);
    poller_wake_on(&b->mu, &b->cv);
    for (;;) {
        pthread_mutex_lock(&b->mu);
        clock_gettime(CLOCK_REALTIME, &until);
        clock_timespec_add_ms(&until, EARLY_POLL_MS);
        /* Until the batch is done, or there is news, or the look is due. */
        while ((b->running > 0 || (early && inflight_busy())) && !b->fresh &&
               !inflight_any_done() && !(early && poller_has_news()) &&
               pthread_cond_timedwait(&b->cv, &b->mu, &until) != ETIMEDOUT)
            ;
        b->fresh = 0;
        running = b->running;
        pthread_mutex_unlock(&b->mu);
        if (w->conf->agent.on ? running == 0 : running == 0 && !inflight_busy()) {
            inflight_wake_on(NULL, NULL); /* every one started is collected: none signals b */
            poller_wake_on(NULL, NULL);
            return;
        }
        if (running == 0 && done < 0) {
            done = clock_now_ms();
            release_backlog(w, cmds, n);
        }
        if (!w->conf->agent.on) {
            struct look lk = {cmds, n, running == 0, starts_since(done), 0, NULL, b};
            apply_early(w, &lk);
        }
    }
}

/* 1 create, 0 kill, 2 a pause or resume that stops or boots a container
 * (seconds, as a create: decision 0074), -1 anything else. */
static int kind(const json_t *cmd)
{
    enum worker_cmd c = command_of(cmd);

    if (c == CMD_CREATE)
        return 1;
    if (apply_pause_slow(cmd))
        return 2;
    return c == CMD_KILL ? 0 : -1;
}

int apply_batchable(const json_t *cmd)
{
    return cmd && kind(cmd) >= 0;
}

static int is_kill(const json_t *cmd)
{
    return kind(cmd) == 0;
}

static int is_freeze(const json_t *cmd)
{
    enum worker_cmd c = command_of(cmd);

    return c == CMD_PAUSE || c == CMD_RESUME;
}

static int not_freeze(const json_t *cmd)
{
    return !is_freeze(cmd);
}

static int any(const json_t *cmd)
{
    return cmd != NULL;
}

/* The sandbox a command is about. */
const char *apply_sbid_of(const json_t *cmd)
{
    const char *id = json_string_value(json_object_get(cmd, "sandbox_id"));

    return id ? id : json_string_value(json_object_get(json_object_get(cmd, "sandbox"), "id"));
}

/* 1 when a command of sbid that match() picks stands in cmds[from..end). */
static int within(json_t *cmds, size_t from, size_t end, const char *sbid,
                  int (*match)(const json_t *))
{
    for (size_t i = from; sbid && i < end; i++) {
        const char *k = apply_sbid_of(json_array_get(cmds, i));
        if (match(json_array_get(cmds, i)) && k && strcmp(k, sbid) == 0)
            return 1;
    }
    return 0;
}

static int is_create(const json_t *cmd)
{
    return kind(cmd) == 1;
}

void apply_order(json_t *cmds)
{
    json_t *freezes = json_array(), *kills = json_array(), *creates = json_array(),
           *rest = json_array();
    size_t i;
    json_t *c;

    json_array_foreach(cmds, i, c)
    {
        const char *sbid = apply_sbid_of(c);
        if (is_freeze(c) && !within(cmds, 0, i, sbid, not_freeze))
            json_array_append(freezes, c);
        else if (is_kill(c) && !within(cmds, 0, i, sbid, is_create))
            json_array_append(kills, c);
        else if (is_create(c) && !within(cmds, 0, i, sbid, is_kill))
            json_array_append(creates, c);
        else
            json_array_append(rest, c);
    }
    json_array_clear(cmds);
    json_array_extend(cmds, freezes);
    json_array_extend(cmds, kills);
    json_array_extend(cmds, creates);
    json_array_extend(cmds, rest);
    json_decref(freezes);
    json_decref(kills);
    json_decref(creates);
    json_decref(rest);
}

/* 1 when list holds id, as a command's "id" or as a plain string (acks). */
static int holds_id(const json_t *list, const char *id)
{
    size_t i;
    json_t *e;

    json_array_foreach(list, i, e)
    {
        const char *x =
            json_is_string(e) ? json_string_value(e) : json_string_value(json_object_get(e, "id"));
        if (x && strcmp(x, id) == 0)
            return 1;
    }
    return 0;
}

/* Appends to into each of cmds whose id is in none of into, also and acks. */
static void merge_new(json_t *into, const json_t *also, const json_t *acks, json_t *cmds)
{
    size_t i;
    json_t *c;

    json_array_foreach(cmds, i, c)
    {
        const char *id = json_string_value(json_object_get(c, "id"));
        if (!id || (!holds_id(into, id) && !holds_id(also, id) && !holds_id(acks, id)))
            json_array_append(into, c);
    }
}

void backlog_merge(json_t *backlog, const json_t *acks, json_t *cmds)
{
    merge_new(backlog, backlog, acks, cmds);
}

void arrived_merge(json_t *arrived, const json_t *backlog, const json_t *acks, json_t *cmds)
{
    merge_new(arrived, backlog, acks, cmds);
}

static int in_batch(json_t *cmds, int n, const char *sbid);

/* Runs cmds[0..n) (of kind k) each on a thread of its own; one that gets no
 * thread runs on the main connection before the next starts. */
static void start_jobs(struct worker *w, json_t *cmds, int n, int k, struct job *jobs,
                       pthread_t *th, int *started, struct batch *b)
{
    for (int i = 0; i < n; i++) {
        jobs[i] = (struct job){
            .w = w, .cmd = json_array_get(cmds, (size_t)i), .kind = k, .result = -1, .batch = b};
        pthread_mutex_lock(&b->mu);
        b->running++;
        pthread_mutex_unlock(&b->mu);
        /* A lone command gets a thread too: a kill or create that takes longer
         * than the lease (dockerd under load) must not hold the main thread. */
        started[i] = pthread_create(&th[i], NULL, run_job, &jobs[i]) == 0;
        if (!started[i]) { /* no thread to be had: on the main connection */
            pthread_mutex_lock(&b->mu);
            b->running--;
            pthread_mutex_unlock(&b->mu);
            jobs[i].result = apply_on(&jobs[i], &w->dk);
            jobs[i].ended = 1;
        }
    }
}

static void join_jobs(int n, const struct job *jobs, const pthread_t *th, const int *started,
                      int *results)
{
    for (int i = 0; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        results[i] = jobs[i].result;
    }
}

int apply_batch_parallel(struct worker *w, json_t *cmds, int results[APPLY_PARALLEL])
{
    struct job jobs[APPLY_PARALLEL];
    pthread_t th[APPLY_PARALLEL];
    int started[APPLY_PARALLEL] = {0};
    int n = 0, k = json_array_size(cmds) ? kind(json_array_get(cmds, 0)) : -1;
    struct batch b = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

    while (k >= 0 && n < APPLY_PARALLEL && (size_t)n < json_array_size(cmds) &&
           kind(json_array_get(cmds, (size_t)n)) == k &&
           !in_batch(cmds, n, apply_sbid_of(json_array_get(cmds, (size_t)n)) ?: ""))
        n++; /* one command a sandbox: a pause and its resume are applied in turn */
    if (k == 1 && n > 0)
        hostcaps_recheck(w, 1); /* the rules, checked right before sandboxes start */
    b.jobs = jobs;
    b.n = n;
    start_jobs(w, cmds, n, k, jobs, th, started, &b);
    await_batch(w, &b, cmds, n);
    join_jobs(n, jobs, th, started, results);
    return n;
}

/* 1 when the first n of cmds hold a command of sbid. */
static int in_batch(json_t *cmds, int n, const char *sbid)
{
    for (int i = 0; i < n; i++) {
        const char *k = apply_sbid_of(json_array_get(cmds, (size_t)i));
        if (k && strcmp(k, sbid) == 0)
            return 1;
    }
    return 0;
}

/* What must not stand before an early command of the same sandbox: for a
 * pause or resume any other kind, for a kill its create, for a create
 * anything at all. */
static int (*blocker(const json_t *cmd))(const json_t *)
{
    if (is_freeze(cmd))
        return not_freeze;
    return is_kill(cmd) ? is_create : any;
}

/* 1 while the batch's job for sbid runs. A kill of a sandbox whose create
 * the batch has done starts at once: it waited for the batch's slowest
 * create (1.5 s in the soak, kill p99 over 2 s). */
static int job_running(struct batch *b, const char *sbid)
{
    int running = 0;

    pthread_mutex_lock(&b->mu);
    for (int i = 0; i < b->n && !running; i++) {
        const char *k = apply_sbid_of(b->jobs[i].cmd);
        running = !b->jobs[i].ended && k && strcmp(k, sbid) == 0;
    }
    pthread_mutex_unlock(&b->mu);
    return running;
}

/* A fast pause or resume, a kill or a create in arrived at index i that may
 * be applied now: none of the running batch's sandboxes still being applied, no command of its
 * sandbox before it that blocker() names, nor put off (in later) nor waiting
 * in the backlog (a kill must not pass its sandbox's create), not waiting in
 * the backlog or applied already (brought again). */
static int early_ok(struct worker *w, const struct look *lk, size_t i)
{
    json_t *cmd = json_array_get(w->arrived, i);
    const char *sbid = apply_sbid_of(cmd), *id = json_string_value(json_object_get(cmd, "id"));
    size_t batch = lk->batch == w->backlog ? (size_t)lk->n : 0;

    return ((is_freeze(cmd) && kind(cmd) != 2) || is_kill(cmd) || is_create(cmd)) && sbid && id &&
           !job_running(lk->b, sbid) && !within(w->arrived, 0, i, sbid, blocker(cmd)) &&
           !within(lk->later, 0, json_array_size(lk->later), sbid, any) &&
           !within(w->backlog, batch, json_array_size(w->backlog), sbid, any) &&
           !holds_id(w->backlog, id) && !holds_id(w->acks, id);
}

/* The states a report_only heartbeat told are not told again by the next
 * long-poll: a "running" heard again after the sandbox was deleted meanwhile
 * would make the control plane send it a second kill. A state that changed
 * since stays to be told. */
static void forget_reported(struct worker *w, json_t *told)
{
    size_t i;
    json_t *r;

    pthread_mutex_lock(&w->table.mu);
    json_array_foreach(told, i, r)
    {
        struct sb_entry *e = sbtable_get(&w->table, json_string_value(json_object_get(r, "id")));
        const char *state = json_string_value(json_object_get(r, "state"));
        if (e && state && e->st.state == sb_state_decode(state))
            e->dirty = 0;
    }
    pthread_mutex_unlock(&w->table.mu);
}

/* Applies one early pause or resume on the main connection; 0 done, -1 not
 * (dockerd unreachable: after the batch). Its outcome joins told. */
static int apply_one_early(struct worker *w, json_t *cmd, json_t *told)
{
    const char *sbid = apply_sbid_of(cmd);
    struct sb_entry *e;
    int rc;

    lease_blocked(w, 1);
    rc = apply_pause_command(w, &w->dk, cmd);
    lease_blocked(w, 0);
    if (rc != 0)
        return -1;
    pthread_mutex_lock(&w->table.mu);
    if ((e = sbtable_get(&w->table, sbid)))
        json_array_append_new(told, heartbeat_report_of(e));
    pthread_mutex_unlock(&w->table.mu);
    return 0;
}

/* Applies an early network update on the main connection; 0, or -1 (after
 * the batch). */
static int apply_early_egress(struct worker *w, json_t *cmd)
{
    int rc;

    lease_blocked(w, 1);
    rc = apply_egress_update(w, &w->dk, apply_sbid_of(cmd), json_object_get(cmd, "args"));
    lease_blocked(w, 0);
    return rc;
}

/* Starts the early kill or create at index i of arrived on a thread of its
 * own (inflight.c); 0 started, -1 not now. A create takes its slot here, on
 * the main thread, and waits when none is free: creates started in one look
 * would each see the same count and all but the first fail "no free slot"
 * (the soak); after the batch, the kills that hold slots are done. The
 * isolation rules are checked right before, as a batch's are (once a look). */
static int start_early(struct worker *w, struct look *lk, size_t i)
{
    json_t *cmd = json_array_get(w->arrived, i);
    const char *sbid = apply_sbid_of(cmd);
    int create = is_create(cmd), took = 0;

    if (lk->starts < (create ? 2 : 1) || inflight_holds(sbid) || !early_ok(w, lk, i) ||
        (create && (took = apply_slot_take(w, sbid)) == 0))
        return -1;
    if (create && !lk->checked) {
        hostcaps_recheck(w, 1);
        lk->checked = 1;
    }
    return inflight_start(w, cmd, create, took);
}

/* What was not applied early stays in arrived, in its order. */
static void keep_unapplied(struct worker *w)
{
    json_t *kept = json_array();
    size_t i;

    for (i = 0; i < json_array_size(w->arrived); i++) {
        json_t *cmd = json_array_get(w->arrived, i);
        const char *id = json_string_value(json_object_get(cmd, "id"));
        if (!id || !holds_id(w->acks, id))
            json_array_append(kept, cmd);
    }
    json_array_clear(w->arrived);
    json_array_extend(w->arrived, kept);
    json_decref(kept);
}

/* A batch holds the main thread for seconds (8 kills took 4 s on 2 cores);
 * a pause that came meanwhile waited for its end, and for every batch queued
 * before it (12-15 s behind 20 kills, against 50 ms alone), a kill behind
 * creates ran on for a minute (issue 34), and a create waited for the
 * slowest of the batch before it (decision 0077). The main thread only waits
 * meanwhile, and a pause or resume is a few dockerd calls on the main
 * connection, which no batch thread uses: so it asks for what came
 * (heartbeat_keepalive), applies pauses, resumes and network updates at once, starts kills
 * and creates on threads of their own, and tells their outcome (and that of
 * the batch's creates done so far) on a report_only heartbeat; their acks go
 * with the next long-poll, as every ack. The rest waits for the batch's end,
 * as before. Only the backlog is read here: batch threads read it too. */
static void apply_early(struct worker *w, struct look *lk)
{
    json_t *told = json_array();
    size_t i, n_killed;

    lk->later = json_array();
    inflight_collect(w, told);
    arrived_from_poller(w);
    for (int j = 0; j < lk->n; j++)
        if (is_create(json_array_get(lk->batch, (size_t)j)))
            report_add_running(w, apply_sbid_of(json_array_get(lk->batch, (size_t)j)), told);
    heartbeat_keepalive(w);
    for (i = 0; i < json_array_size(w->arrived); i++) {
        json_t *cmd = json_array_get(w->arrived, i);
        const char *id = json_string_value(json_object_get(cmd, "id"));

        if ((id && holds_id(w->acks, id)) || (id && holds_id(lk->later, id)))
            continue;
        /* Started, not waited for; one in flight stays unacknowledged, and
         * holds back what follows it. */
        if (is_kill(cmd) || is_create(cmd)) {
            if (start_early(w, lk, i) != 0)
                json_array_append(lk->later, cmd);
            continue;
        }
        /* A live network update is a file and a signal (egress_live.c):
         * applied at once, unless its sandbox is in the batch. */
        if (command_of(cmd) == CMD_EGRESS) {
            if (!id || job_running(lk->b, apply_sbid_of(cmd)) || apply_early_egress(w, cmd) != 0)
                json_array_append(lk->later, cmd);
            else
                json_array_append_new(w->acks, json_string(id));
            continue;
        }
        if (!is_freeze(cmd))
            continue;
        /* Not now, or dockerd unreachable: after the batch. The lease is the
         * lease thread's (decision 0076). */
        if (!early_ok(w, lk, i) || apply_one_early(w, cmd, told) != 0) {
            json_array_append(lk->later, cmd);
            continue;
        }
        json_array_append_new(w->acks, json_string(id));
    }
    keep_unapplied(w);
    json_decref(lk->later);
    lk->later = NULL;
    n_killed = json_array_size(w->killed);
    if (report_post(w, &w->ctl, json_incref(told), w->killed, NULL)) {
        forget_reported(w, told);
        while (n_killed-- > 0)
            json_array_remove(w->killed, 0);
    }
    json_decref(told);
}
