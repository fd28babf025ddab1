/* apply_batch.c: creates applied in parallel.
 *
 * A create is mostly waiting: on dockerd (create, start) and on envd's first
 * answer. Applied one after another, 20 creates take 20 times one; applied
 * together they overlap, as 20 plain `docker run`s would. Each thread has its
 * own dockerd connection (a curl handle is not shared between threads); the
 * sandbox table has its own lock. Kills and other commands stay sequential. */
#include "worker.h"

#include "log.h"

#include <pthread.h>
#include <string.h>

struct job {
    struct worker *w;
    json_t *sandbox;
    int result;
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    struct docker dk = {0};

    if (docker_init(&dk, j->w->conf->docker_socket) != 0) {
        j->result = -1;
        return NULL;
    }
    j->result = apply_create(j->w, &dk, j->sandbox);
    docker_close(&dk);
    return NULL;
}

static int is_create(json_t *cmd)
{
    const char *type = json_string_value(json_object_get(cmd, "type"));
    return type && strcmp(type, "create") == 0;
}

int apply_creates_parallel(struct worker *w, json_t *cmds, int results[APPLY_PARALLEL])
{
    struct job jobs[APPLY_PARALLEL];
    pthread_t th[APPLY_PARALLEL];
    int started[APPLY_PARALLEL] = {0};
    int n = 0;

    while (n < APPLY_PARALLEL && (size_t)n < json_array_size(cmds) &&
           is_create(json_array_get(cmds, (size_t)n)))
        n++;
    for (int i = 0; i < n; i++) {
        jobs[i] = (struct job){w, json_object_get(json_array_get(cmds, (size_t)i), "sandbox"), -1};
        started[i] = n == 1 ? 0 : pthread_create(&th[i], NULL, run_job, &jobs[i]) == 0;
        if (!started[i])
            run_job(&jobs[i]); /* one create, or no thread to be had: apply it here */
    }
    for (int i = 0; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        results[i] = jobs[i].result;
    }
    return n;
}
