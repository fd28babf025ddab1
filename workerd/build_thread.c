#include "build_thread.h"

#include "build_push.h"
#include "build_run.h"
#include "containers.h"

#include "clock.h"
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUILD_JOBS_MAX 64
#define POST_TIMEOUT_MS 15000L
#define FILES_TIMEOUT_MS 300000L
#define FILES_MAX ((size_t)1 << 30)

struct build_job {
    struct worker *w;
    char sbid[CTR_ID_MAX], ctr[160], ws[64], bid[64], wid[STATE_ID_MAX];
    json_t *build;
    struct layer_plan plan;
    atomic_int cancelled;
    struct docker dk;
    struct control ctl;
    json_t *logs; /* not yet posted */
    int64_t posted_ms;
    /* mu guards logs, posted_ms and ctl: the flusher posts what a long step
     * printed while the build thread waits on it (docs/templates.md). */
    pthread_mutex_t mu;
    pthread_t flusher;
    int flushing;
    atomic_int done;
};

static pthread_mutex_t jobs_mu = PTHREAD_MUTEX_INITIALIZER;
static struct build_job *jobs[BUILD_JOBS_MAX];

/* Registers j unless its sandbox has one; 0, or -1. */
static int jobs_add(struct build_job *j)
{
    int free_at = -1, rc = 0;

    pthread_mutex_lock(&jobs_mu);
    for (int i = 0; i < BUILD_JOBS_MAX; i++) {
        if (jobs[i] && strcmp(jobs[i]->sbid, j->sbid) == 0)
            rc = -1;
        else if (!jobs[i] && free_at < 0)
            free_at = i;
    }
    if (rc == 0 && free_at >= 0)
        jobs[free_at] = j;
    pthread_mutex_unlock(&jobs_mu);
    return rc == 0 && free_at >= 0 ? 0 : -1;
}

static void jobs_del(const struct build_job *j)
{
    pthread_mutex_lock(&jobs_mu);
    for (int i = 0; i < BUILD_JOBS_MAX; i++)
        if (jobs[i] == j)
            jobs[i] = NULL;
    pthread_mutex_unlock(&jobs_mu);
}

void build_thread_cancel(const char *sbid)
{
    pthread_mutex_lock(&jobs_mu);
    for (int i = 0; sbid && i < BUILD_JOBS_MAX; i++)
        if (jobs[i] && strcmp(jobs[i]->sbid, sbid) == 0)
            atomic_store(&jobs[i]->cancelled, 1);
    pthread_mutex_unlock(&jobs_mu);
}

static void job_free(struct build_job *j)
{
    atomic_store(&j->done, 1);
    if (j->flushing)
        pthread_join(j->flusher, NULL);
    pthread_mutex_destroy(&j->mu);
    jobs_del(j);
    docker_close(&j->dk);
    control_close(&j->ctl);
    json_decref(j->build);
    json_decref(j->logs);
    free(j);
}

static void identity(struct build_job *j, struct worker_identity *id)
{
    pthread_mutex_lock(&j->w->id_mu);
    *id = j->w->id;
    pthread_mutex_unlock(&j->w->id_mu);
}

/* POST /v1/worker/builds/{bid}: the logs so far and what more (may be NULL,
 * taken). The logs are kept for the next post when this one is not taken.
 * With j->mu held. */
static void post_locked(struct build_job *j, json_t *more)
{
    struct worker_identity id;
    char path[128], err[256];
    json_t *body = json_pack("{s:s, s:O}", "workspace", j->ws, "logs", j->logs), *ans = NULL;
    long status = 0;

    if (body && more)
        json_object_update(body, more);
    json_decref(more);
    identity(j, &id);
    snprintf(path, sizeof(path), "/v1/worker/builds/%s", j->bid);
    if (!body || control_post(&j->ctl, path, body, &id, POST_TIMEOUT_MS, &status, &ans, err,
                              sizeof(err)) != 0)
        log_sandbox("warn", j->sbid, NULL, "build %s: report: %s", j->bid,
                    body ? err : "no memory");
    else if (status != 200)
        log_sandbox("warn", j->sbid, NULL, "build %s: report answered %ld", j->bid, status);
    else
        json_array_clear(j->logs);
    explicit_bzero(&id, sizeof(id));
    json_decref(body);
    json_decref(ans);
    j->posted_ms = clock_now_ms();
}

static void post(struct build_job *j, json_t *more)
{
    pthread_mutex_lock(&j->mu);
    post_locked(j, more);
    pthread_mutex_unlock(&j->mu);
}

/* A step that prints a line and then works for minutes: its line is posted
 * within BUILD_POST_EVERY_MS all the same. */
static void *flush_loop(void *arg)
{
    struct build_job *j = arg;

    while (!atomic_load(&j->done)) {
        clock_sleep_ms(BUILD_POST_EVERY_MS / 2);
        pthread_mutex_lock(&j->mu);
        if (json_array_size(j->logs) > 0 && clock_now_ms() - j->posted_ms >= BUILD_POST_EVERY_MS)
            post_locked(j, NULL);
        pthread_mutex_unlock(&j->mu);
    }
    return NULL;
}

static void add_log(struct build_job *j, const char *level, const char *text)
{
    char ts[40], frac[24];
    struct timespec now;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(frac, sizeof(frac), ".%03ldZ", now.tv_nsec / 1000000);
    strncat(ts, frac, sizeof(ts) - strlen(ts) - 1);
    pthread_mutex_lock(&j->mu);
    json_array_append_new(
        j->logs, json_pack("{s:s, s:s, s:s}", "timestamp", ts, "level", level, "message", text));
    if (clock_now_ms() - j->posted_ms >= BUILD_POST_EVERY_MS)
        post_locked(j, NULL);
    pthread_mutex_unlock(&j->mu);
}

static void on_line(void *ud, const char *line)
{
    add_log(ud, "info", line);
}

static int fetch(void *ud, const char *hash, char **buf, size_t *len, char *err, size_t errlen)
{
    struct build_job *j = ud;
    struct worker_identity id;
    char path[256];
    long status = 0;
    int rc;

    identity(j, &id);
    snprintf(path, sizeof(path), "/v1/worker/build-files/%s/%s", j->bid, hash);
    pthread_mutex_lock(&j->mu);
    rc = control_get(&j->ctl, path, &id, FILES_TIMEOUT_MS, FILES_MAX, &status, buf, len, err,
                     errlen);
    pthread_mutex_unlock(&j->mu);
    explicit_bzero(&id, sizeof(id));
    if (rc != 0)
        return -1;
    if (status != 200) {
        free(*buf);
        *buf = NULL;
        snprintf(err, errlen, "COPY: files %.80s: the control plane answered %ld", hash, status);
        return 1;
    }
    return 0;
}

/* The sandbox was killed (or its container is gone): nothing to tell. */
static int gone(struct build_job *j)
{
    return atomic_load(&j->cancelled) || containers_running(&j->dk, j->wid, j->sbid) != 1;
}

/* "[n/total] TYPE arg arg …" */
static void step_title(const json_t *step, size_t n, size_t total, char *out, size_t len)
{
    json_t *a;
    size_t i;
    int used = snprintf(out, len, "[%zu/%zu] %s", n, total,
                        json_string_value(json_object_get(step, "type")) ?: "?");

    json_array_foreach(json_object_get(step, "args"), i, a)
    {
        if (used < 0 || (size_t)used >= len)
            break;
        used += snprintf(out + used, len - (size_t)used, " %s", json_string_value(a) ?: "");
    }
}

static void fail(struct build_job *j, const char *step, const char *reason)
{
    add_log(j, "error", reason);
    log_sandbox("warn", j->sbid, NULL, "build %s failed: %s", j->bid, reason);
    post(j, json_pack("{s:s, s:s, s:s}", "state", "error", "step", step, "reason", reason));
}

/* Runs step n (1-based) and commits it; key and image move on. 0, or 1 the
 * build ended (reported, or quietly when the sandbox went). */
static int one_step(struct build_job *j, const struct build_io *io, json_t *step, size_t n,
                    struct build_state *st, char *key, char *image)
{
    char reason[600], why[512], nstr[24], next[LAYER_KEY_MAX];
    struct build_step s;
    int rc;

    snprintf(nstr, sizeof(nstr), "%zu", n);
    snprintf(why, sizeof(why), "out of memory");
    if (build_step_decode(step, &s, why, sizeof(why)) != 0 || build_layer_key(key, step, next) != 0)
        rc = 1;
    else
        rc = build_step_run(io, &s, st, why, sizeof(why));
    if (rc == 0)
        rc = build_commit(io, next, st, image, why, sizeof(why));
    if (rc != 0 && gone(j))
        return 1;
    if (rc != 0) {
        snprintf(reason, sizeof(reason), "step %s: %s", nstr, why);
        fail(j, nstr, reason);
        return 1;
    }
    snprintf(key, LAYER_KEY_MAX, "%s", next);
    return 0;
}

static int run_steps(struct build_job *j, char *image)
{
    json_t *steps = json_object_get(j->build, "steps"), *step;
    json_int_t to = json_integer_value(json_object_get(j->build, "step_timeout_s"));
    struct build_io io = {.d = &j->dk,
                          .ctr = j->ctr,
                          .fetch = fetch,
                          .line = on_line,
                          .ud = j,
                          .step_timeout_ms = (to > 0 ? to : BUILD_STEP_TIMEOUT_S_DEFAULT) * 1000};
    size_t i, total = json_array_size(steps);
    char key[LAYER_KEY_MAX], title[512], msg[600];
    struct build_state st;
    int rc = 0;

    layer_plan_state(&j->dk, &j->plan, &st);
    snprintf(key, sizeof(key), "%s", j->plan.key);
    snprintf(image, LAYER_KEY_MAX, "%s", j->plan.image);
    json_array_foreach(steps, i, step)
    {
        step_title(step, i + 1, total, title, sizeof(title));
        snprintf(msg, sizeof(msg), "%s%s", (int)i < j->plan.cached ? "CACHED " : "", title);
        add_log(j, "info", msg);
        if ((int)i >= j->plan.cached && (rc = one_step(j, &io, step, i + 1, &st, key, image)) != 0)
            break;
    }
    build_state_free(&st);
    return rc;
}

/* What the template adds to its base: what counts against the workspace's
 * template_storage_mb (the base's layers are shared, not the tenant's). */
static long long added_size(struct build_job *j, const char *image)
{
    long long size = layer_image_size(&j->dk, image);

    return size > j->plan.base_size ? size - j->plan.base_size : 0;
}

static void finish(struct build_job *j, const char *image)
{
    const char *target = json_string_value(json_object_get(j->build, "target"));
    struct worker_identity id;
    char digest[DIGEST_MAX], err[600];
    int rc;

    add_log(j, "info", "pushing the template");
    identity(j, &id);
    rc = target ? build_push(&j->dk, j->w->conf, &id, image, target, digest, err, sizeof(err)) : 1;
    explicit_bzero(&id, sizeof(id));
    if (!target)
        snprintf(err, sizeof(err), "the build names no target");
    if (rc != 0 && gone(j))
        return;
    if (rc != 0) {
        fail(j, "finalize", err);
        return;
    }
    log_sandbox("info", j->sbid, NULL, "build %s ready: %s@%s", j->bid, target, digest);
    add_log(j, "info", "build finished");
    post(j, json_pack("{s:s, s:s, s:s, s:I}", "state", "ready", "image", target, "digest", digest,
                      "size_bytes", (json_int_t)added_size(j, image)));
}

static void *run(void *arg)
{
    struct build_job *j = arg;
    char image[LAYER_KEY_MAX];

    if (docker_init(&j->dk, j->w->conf->docker_socket) == 0 &&
        control_init(&j->ctl, j->w->conf) == 0) {
        post(j, json_pack("{s:s, s:s}", "state", "building", "step", "0"));
        j->flushing = pthread_create(&j->flusher, NULL, flush_loop, j) == 0;
        if (run_steps(j, image) == 0)
            finish(j, image);
    }
    job_free(j);
    return NULL;
}

static struct build_job *job_new(struct worker *w, json_t *sb, const struct layer_plan *plan)
{
    struct build_job *j = calloc(1, sizeof(*j));
    json_t *b = json_object_get(sb, "build");

    if (!j)
        return NULL;
    j->w = w;
    snprintf(j->sbid, sizeof(j->sbid), "%s", json_string_value(json_object_get(sb, "id")) ?: "");
    snprintf(j->ws, sizeof(j->ws), "%s", json_string_value(json_object_get(sb, "workspace")) ?: "");
    snprintf(j->bid, sizeof(j->bid), "%s", json_string_value(json_object_get(b, "id")) ?: "");
    snprintf(j->wid, sizeof(j->wid), "%s", w->id.worker_id);
    containers_name(j->ctr, sizeof(j->ctr), j->sbid, j->wid);
    j->build = json_deep_copy(b);
    j->logs = json_array();
    pthread_mutex_init(&j->mu, NULL);
    j->plan = *plan;
    if (!j->build || !j->logs || !containers_id_ok(j->bid)) {
        job_free(j);
        return NULL;
    }
    return j;
}

void build_thread_start(struct worker *w, json_t *sb, const struct layer_plan *plan, int fresh)
{
    struct build_job *j = job_new(w, sb, plan);
    pthread_attr_t attr;
    pthread_t th;

    if (!j)
        return;
    if (jobs_add(j) != 0) { /* its thread runs already (a create delivered again) */
        job_free(j);
        return;
    }
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (fresh && pthread_create(&th, &attr, run, j) == 0) {
        pthread_attr_destroy(&attr);
        return;
    }
    pthread_attr_destroy(&attr);
    /* Not started here: report it failed, on this (the create's) thread. */
    if (docker_init(&j->dk, w->conf->docker_socket) == 0 && control_init(&j->ctl, w->conf) == 0)
        fail(j, "0",
             fresh ? "workerd could not start the build's thread"
                   : "the build's worker restarted during the build");
    job_free(j);
}
