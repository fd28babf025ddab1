/* kills_inflight.c: the kills that came while a batch runs, each applied on a
 * thread of its own and not waited for.
 *
 * The main thread only starts them and, at its next look, collects those
 * done: waiting for them would hold every kill that came a moment later
 * behind dockerd's removal of the first (a second and more under load: issue
 * 34). Each kill tells its waiting caller itself once the sandbox's processes
 * are dead (apply_kill); its command is acknowledged and its id joins the
 * heartbeat's `killed` list only once its containers are removed. A kill in
 * flight stays in w->arrived, unacknowledged: nothing else of its sandbox
 * passes it (inflight_holds), and the batch's end collects them all before
 * the arrived commands join the backlog. Main thread only, but for `done`. */
#include "worker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static struct slot {
    struct worker *w;
    json_t *cmd; /* NULL: free */
    pthread_t th;
    atomic_int done;
    int result;
} slots[APPLY_PARALLEL];

static const char *sbid_of(const json_t *cmd)
{
    return json_string_value(json_object_get(cmd, "sandbox_id"));
}

static void *run(void *arg)
{
    struct slot *s = arg;
    struct docker dk = {0};

    s->result = docker_init(&dk, s->w->conf->docker_socket) != 0
                    ? -1
                    : apply_kill(s->w, &dk, sbid_of(s->cmd));
    docker_close(&dk);
    atomic_store(&s->done, 1);
    return NULL;
}

int inflight_start(struct worker *w, json_t *cmd)
{
    for (int i = 0; i < APPLY_PARALLEL; i++) {
        struct slot *s = &slots[i];
        if (s->cmd)
            continue;
        *s = (struct slot){.w = w, .cmd = json_incref(cmd), .result = -1};
        if (pthread_create(&s->th, NULL, run, s) != 0) {
            json_decref(s->cmd);
            s->cmd = NULL;
            return -1;
        }
        return 0;
    }
    return -1; /* as many as a batch in flight already: the next look */
}

int inflight_holds(const char *sbid)
{
    for (int i = 0; sbid && i < APPLY_PARALLEL; i++) {
        const char *k = slots[i].cmd ? sbid_of(slots[i].cmd) : NULL;
        if (k && strcmp(k, sbid) == 0)
            return 1;
    }
    return 0;
}

void inflight_collect(struct worker *w, int wait_all)
{
    for (int i = 0; i < APPLY_PARALLEL; i++) {
        struct slot *s = &slots[i];
        const char *id;
        if (!s->cmd || (!wait_all && !atomic_load(&s->done)))
            continue;
        pthread_join(s->th, NULL);
        id = json_string_value(json_object_get(s->cmd, "id"));
        /* One that failed (dockerd unreachable) stays unacknowledged in
         * w->arrived: tried again at the next look, or after the batch. */
        if (s->result == 0 && id) {
            json_array_append_new(w->acks, json_string(id));
            json_array_append_new(w->killed, json_string(sbid_of(s->cmd)));
        }
        json_decref(s->cmd);
        s->cmd = NULL;
    }
}
