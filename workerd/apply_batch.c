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

#include <pthread.h>
#include <string.h>

struct job {
    struct worker *w;
    json_t *cmd;
    int is_create;
    int result;
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

    if (docker_init(&dk, j->w->conf->docker_socket) != 0) {
        j->result = -1;
        return NULL;
    }
    j->result = apply_on(j, &dk);
    docker_close(&dk);
    return NULL;
}

/* 1 create, 0 kill, -1 anything else. */
static int kind(json_t *cmd)
{
    const char *type = json_string_value(json_object_get(cmd, "type"));

    if (type && strcmp(type, "create") == 0)
        return 1;
    return type && strcmp(type, "kill") == 0 ? 0 : -1;
}

int apply_batch_parallel(struct worker *w, json_t *cmds, int results[APPLY_PARALLEL])
{
    struct job jobs[APPLY_PARALLEL];
    pthread_t th[APPLY_PARALLEL];
    int started[APPLY_PARALLEL] = {0};
    int n = 0, k = json_array_size(cmds) ? kind(json_array_get(cmds, 0)) : -1;

    while (k >= 0 && n < APPLY_PARALLEL && (size_t)n < json_array_size(cmds) &&
           kind(json_array_get(cmds, (size_t)n)) == k)
        n++;
    for (int i = 0; i < n; i++) {
        jobs[i] = (struct job){w, json_array_get(cmds, (size_t)i), k, -1};
        started[i] = n > 1 && pthread_create(&th[i], NULL, run_job, &jobs[i]) == 0;
        if (!started[i]) /* one command, or no thread to be had: on the main connection */
            jobs[i].result = apply_on(&jobs[i], &w->dk);
    }
    for (int i = 0; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        results[i] = jobs[i].result;
    }
    return n;
}
