/* inflight.c: the kills and creates that come while a batch runs, each
 * applied on a thread of its own and not waited for.
 *
 * The main thread only starts them and, at its next look, collects those
 * done: waiting for them would hold every kill that came a moment later
 * behind dockerd's removal of the first (a second and more under load: issue
 * 34), and a create that came a moment after a batch started waited for the
 * batch's slowest (7 s behind 8 creates; decision 0077). Each kill tells its
 * waiting caller itself once the sandbox's processes are dead (apply_kill);
 * its command is acknowledged and its id joins the heartbeat's `killed` list
 * only once its containers are removed. A create is acknowledged, and its
 * running sandbox told, when collected. A command in flight stays in
 * w->arrived, unacknowledged: nothing else of its sandbox passes it
 * (inflight_holds), and the batch ends only once all are collected, before
 * the arrived commands join the backlog. Main thread only, but for `done`. */
#include "worker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static struct slot {
    struct worker *w;
    json_t *cmd; /* NULL: free */
    int create;  /* else a kill */
    int took;    /* a create's slot (apply_slot_take) */
    pthread_t th;
    atomic_int done;
    int result;
} slots[APPLY_PARALLEL];

static pthread_mutex_t *wake_mu;
static pthread_cond_t *wake_cv;

void inflight_wake_on(pthread_mutex_t *mu, pthread_cond_t *cv)
{
    wake_mu = mu;
    wake_cv = cv;
}

/* Its end noted where the main thread looks for it, and the main thread woken. */
static void ended(struct slot *s)
{
    if (wake_mu)
        pthread_mutex_lock(wake_mu);
    atomic_store(&s->done, 1);
    if (wake_mu) {
        pthread_cond_signal(wake_cv);
        pthread_mutex_unlock(wake_mu);
    }
}

static void *run(void *arg)
{
    struct slot *s = arg;
    struct docker dk = {0};

    if (docker_init(&dk, s->w->conf->docker_socket) != 0) {
        s->result = -1; /* tried again at the next look, which takes a slot again */
        if (s->create)
            apply_slot_give(s->w, s->took);
    } else if (s->create)
        s->result = apply_create_taken(s->w, &dk, json_object_get(s->cmd, "sandbox"), s->took);
    else
        s->result = apply_kill(s->w, &dk, apply_sbid_of(s->cmd));
    docker_close(&dk);
    ended(s);
    return NULL;
}

/* A free slot of ours, or NULL: as many as a batch in flight already. */
static struct slot *free_slot(void)
{
    for (int i = 0; i < APPLY_PARALLEL; i++)
        if (!slots[i].cmd)
            return &slots[i];
    return NULL;
}

int inflight_start(struct worker *w, json_t *cmd, int create, int took)
{
    struct slot *s = free_slot();

    if (s) {
        *s = (struct slot){
            .w = w, .cmd = json_incref(cmd), .result = -1, .create = create, .took = took};
        if (pthread_create(&s->th, NULL, run, s) == 0)
            return 0;
        json_decref(s->cmd);
        s->cmd = NULL;
    }
    if (create)
        apply_slot_give(w, took);
    return -1;
}

int inflight_busy(void)
{
    for (int i = 0; i < APPLY_PARALLEL; i++)
        if (slots[i].cmd)
            return 1;
    return 0;
}

int inflight_any_done(void)
{
    for (int i = 0; i < APPLY_PARALLEL; i++)
        if (slots[i].cmd && atomic_load(&slots[i].done))
            return 1;
    return 0;
}

int inflight_holds(const char *sbid)
{
    for (int i = 0; sbid && i < APPLY_PARALLEL; i++) {
        const char *k = slots[i].cmd ? apply_sbid_of(slots[i].cmd) : NULL;
        if (k && strcmp(k, sbid) == 0)
            return 1;
    }
    return 0;
}

void inflight_collect(struct worker *w, json_t *told)
{
    for (int i = 0; i < APPLY_PARALLEL; i++) {
        struct slot *s = &slots[i];
        const char *id;
        if (!s->cmd || !atomic_load(&s->done))
            continue;
        pthread_join(s->th, NULL);
        id = json_string_value(json_object_get(s->cmd, "id"));
        /* One that failed (dockerd unreachable) stays unacknowledged in
         * w->arrived: tried again at the next look, or after the batch. */
        if (s->result == 0 && id) {
            json_array_append_new(w->acks, json_string(id));
            if (s->create)
                report_add_running(w, apply_sbid_of(s->cmd), told);
            else
                json_array_append_new(w->killed, json_string(apply_sbid_of(s->cmd)));
        }
        json_decref(s->cmd);
        s->cmd = NULL;
    }
}
