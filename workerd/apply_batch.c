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

#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

struct job {
    struct worker *w;
    json_t *cmd;
    int is_create;
    int result;
    struct batch *batch;
};

/* How many jobs of a batch are still running, for the main thread's wait. */
struct batch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running;
};

static int apply_on(struct job *j, struct docker *dk)
{
    if (j->is_create)
        return apply_create(j->w, dk, json_object_get(j->cmd, "sandbox"));
    return apply_kill(j->w, dk, json_string_value(json_object_get(j->cmd, "sandbox_id")));
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
    j->batch->running--;
    pthread_cond_signal(&j->batch->cv);
    pthread_mutex_unlock(&j->batch->mu);
    return NULL;
}

/* Waits for the batch's threads, renewing the lease every third of it. The
 * time of the next renewal is fixed when the last one went: a thread ending
 * wakes the wait, and restarting the count there let a batch whose creates
 * ended a second apart go without any renewal until the lease ran out. */
static void await_batch(struct worker *w, struct batch *b)
{
    long every = w->lease_ms > 0 ? w->lease_ms / 3 : 5000;
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    pthread_mutex_lock(&b->mu);
    while (b->running > 0) {
        until.tv_sec += every / 1000;
        until.tv_nsec += (every % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (b->running > 0 && pthread_cond_timedwait(&b->cv, &b->mu, &until) != ETIMEDOUT)
            ;
        if (b->running > 0) {
            pthread_mutex_unlock(&b->mu);
            heartbeat_keepalive(w);
            pthread_mutex_lock(&b->mu);
            clock_gettime(CLOCK_REALTIME, &until);
        }
    }
    pthread_mutex_unlock(&b->mu);
}

/* 1 create, 0 kill, -1 anything else. */
static int kind(json_t *cmd)
{
    const char *type = json_string_value(json_object_get(cmd, "type"));

    if (type && strcmp(type, "create") == 0)
        return 1;
    return type && strcmp(type, "kill") == 0 ? 0 : -1;
}

/* The sandbox a command is about. */
static const char *sbid_of(json_t *cmd)
{
    const char *id = json_string_value(json_object_get(cmd, "sandbox_id"));

    return id ? id : json_string_value(json_object_get(json_object_get(cmd, "sandbox"), "id"));
}

/* 1 when a kill of sbid stands in cmds before index end. */
static int killed_before(json_t *cmds, size_t end, const char *sbid)
{
    for (size_t i = 0; sbid && i < end; i++) {
        const char *k = sbid_of(json_array_get(cmds, i));
        if (kind(json_array_get(cmds, i)) == 0 && k && strcmp(k, sbid) == 0)
            return 1;
    }
    return 0;
}

void apply_order(json_t *cmds)
{
    json_t *first = json_array(), *rest = json_array();
    size_t i;
    json_t *c;

    json_array_foreach(cmds, i, c)
    {
        int ahead = kind(c) == 1 && !killed_before(cmds, i, sbid_of(c));
        json_array_append(ahead ? first : rest, c);
    }
    json_array_clear(cmds);
    json_array_extend(cmds, first);
    json_array_extend(cmds, rest);
    json_decref(first);
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

void backlog_merge(json_t *backlog, const json_t *acks, json_t *cmds)
{
    size_t i;
    json_t *c;

    json_array_foreach(cmds, i, c)
    {
        const char *id = json_string_value(json_object_get(c, "id"));
        if (!id || (!holds_id(backlog, id) && !holds_id(acks, id)))
            json_array_append(backlog, c);
    }
}

int apply_batch_parallel(struct worker *w, json_t *cmds, int results[APPLY_PARALLEL])
{
    struct job jobs[APPLY_PARALLEL];
    pthread_t th[APPLY_PARALLEL];
    int started[APPLY_PARALLEL] = {0};
    int n = 0, k = json_array_size(cmds) ? kind(json_array_get(cmds, 0)) : -1;
    struct batch b = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

    while (k >= 0 && n < APPLY_PARALLEL && (size_t)n < json_array_size(cmds) &&
           kind(json_array_get(cmds, (size_t)n)) == k)
        n++;
    if (k == 1 && n > 0)
        hostcaps_recheck(w, 1); /* the rules, checked right before sandboxes start */
    for (int i = 0; i < n; i++) {
        jobs[i] = (struct job){w, json_array_get(cmds, (size_t)i), k, -1, &b};
        pthread_mutex_lock(&b.mu);
        b.running++;
        pthread_mutex_unlock(&b.mu);
        /* A lone command gets a thread too: a kill or create that takes longer
         * than the lease (dockerd under load) must not keep the lease from
         * being renewed, which only this thread's wait does. */
        started[i] = pthread_create(&th[i], NULL, run_job, &jobs[i]) == 0;
        if (!started[i]) { /* no thread to be had: on the main connection */
            pthread_mutex_lock(&b.mu);
            b.running--;
            pthread_mutex_unlock(&b.mu);
            jobs[i].result = apply_on(&jobs[i], &w->dk);
        }
    }
    await_batch(w, &b);
    for (int i = 0; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        results[i] = jobs[i].result;
    }
    return n;
}
