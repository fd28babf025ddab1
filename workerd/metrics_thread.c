/* metrics_thread.c: every metrics_interval_ms, each running sandbox's stats
 * and new log lines, pushed to the control plane on POST /v1/worker/telemetry
 * (decision 0047).
 *
 * A thread of its own, with its own dockerd connection and control channel
 * handle, so sampling never delays the heartbeat. Best effort: a push that
 * fails is not retried, but log lines count as sent only after a 200, so the
 * next push carries them again. */
#include "worker.h"

#include "log.h"
#include "sandbox_sample.h"

#include <stdlib.h>
#include <string.h>

#define PUSH_TIMEOUT_MS 10000
#define PUSH_BUDGET                                                                                \
    (512 * 1024) /* bytes of log lines in one push: half corral-api's body limit                   \
                  */

struct tele {
    struct worker *w;
    struct docker d;
    struct control ctl;
    struct sample_state *v;
    int n, cap;
};

static struct sample_state *state_of(struct tele *t, const char *sbid)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->v[i].sbid, sbid) == 0)
            return &t->v[i];
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 16;
        struct sample_state *v = realloc(t->v, (size_t)cap * sizeof(*v));
        if (!v)
            return NULL;
        t->v = v;
        t->cap = cap;
    }
    memset(&t->v[t->n], 0, sizeof(t->v[0]));
    snprintf(t->v[t->n].sbid, sizeof(t->v[0].sbid), "%s", sbid);
    return &t->v[t->n++];
}

/* Sandboxes no longer running are forgotten: a sandbox started again under
 * the same id is a new container, with a new log. */
static void forget_gone(struct tele *t)
{
    int k = 0;

    for (int i = 0; i < t->n; i++)
        if (t->v[i].live)
            t->v[k++] = t->v[i];
    t->n = k;
}

static json_t *collect(struct tele *t, const char *wid)
{
    int max = t->w->conf->slots > 0 ? (int)t->w->conf->slots : 1;
    char(*ids)[CTR_ID_MAX] = calloc((size_t)max, sizeof(*ids));
    json_t *out = json_array();
    size_t budget = PUSH_BUDGET;
    int n = ids ? sbtable_running_ids(&t->w->table, ids, max) : 0;

    for (int i = 0; i < t->n; i++)
        t->v[i].live = 0;
    for (int i = 0; i < n && !*t->w->stop; i++) {
        struct sample_state *s = state_of(t, ids[i]);
        json_t *one = s ? sample_sandbox(&t->d, wid, s, &budget) : NULL;
        if (s)
            s->live = 1;
        if (one)
            json_array_append_new(out, one);
    }
    free(ids);
    forget_gone(t);
    return out;
}

/* The push itself: the HTTP status, 0 when it did not get one. */
static long post(struct tele *t, json_t *sbs, const struct worker_identity *id)
{
    json_t *body = json_pack("{s:O}", "sandboxes", sbs), *ans = NULL;
    long status = 0;
    char err[256];

    if (!body)
        log_warn("telemetry: out of memory");
    else if (control_post(&t->ctl, "/v1/worker/telemetry", body, id, PUSH_TIMEOUT_MS, &status, &ans,
                          err, sizeof(err)) != 0)
        log_warn("telemetry: %s", err);
    else if (status != 200)
        log_warn("telemetry answered %ld", status);
    json_decref(body);
    json_decref(ans);
    return status;
}

static void push(struct tele *t)
{
    struct worker_identity id;
    json_t *sbs;

    pthread_mutex_lock(&t->w->id_mu);
    id = t->w->id;
    pthread_mutex_unlock(&t->w->id_mu);
    if (!id.worker_id[0])
        return;
    sbs = collect(t, id.worker_id);
    if (json_array_size(sbs) > 0 && post(t, sbs, &id) == 200)
        for (int i = 0; i < t->n; i++)
            t->v[i].log_ns = t->v[i].log_next_ns;
    explicit_bzero(&id, sizeof(id));
    json_decref(sbs);
}

static void *telemetry_main(void *arg)
{
    struct tele *t = arg;

    while (!*t->w->stop) {
        push(t);
        sleep_unless_stopped(t->w->conf->metrics_interval_ms, t->w->stop);
    }
    docker_close(&t->d);
    control_close(&t->ctl);
    free(t->v);
    free(t);
    return NULL;
}

int telemetry_start(struct worker *w, pthread_t *th)
{
    struct tele *t = calloc(1, sizeof(*t));

    if (!t || docker_init(&t->d, w->conf->docker_socket) != 0 ||
        control_init(&t->ctl, w->conf) != 0) {
        if (t)
            docker_close(&t->d);
        free(t);
        return -1;
    }
    t->w = w;
    if (pthread_create(th, NULL, telemetry_main, t) != 0) {
        docker_close(&t->d);
        control_close(&t->ctl);
        free(t);
        return -1;
    }
    return 0;
}
