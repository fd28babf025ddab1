/* agent_audit.c: the agent's side thread: the gate's decisions, from
 * <gate_dir>/audit.jsonl (written by envd's gate, append-only) to the
 * workspace's audit stream, and sessions that ended, told at once.
 *
 * A thread of its own, as the metrics thread is: every second it reads the
 * complete lines past its offset and posts them (at most AUDIT_BATCH at a
 * time) on POST /v1/worker/audit. The offset moves only past lines the
 * control plane answered for, and is kept in <state_dir>/agent-audit (with
 * the file's inode), so a restart neither sends a line twice nor skips one;
 * a file replaced or cut shorter is read again from its start. */
#include "agent.h"
#include "worker.h"

#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define AUDIT_BATCH 200
#define AUDIT_BATCH_BYTES (256 * 1024) /* well under the API's body limit (1 MB) */
#define AUDIT_LINE_MAX 8192
#define AUDIT_POST_TIMEOUT_MS 10000L
#define AUDIT_EVERY_MS 1000L

struct tail {
    struct worker *w;
    struct control ctl;
    char path[512]; /* the gate's audit.jsonl */
    char mark[512]; /* our offset in it */
    unsigned long ino;
    long off;
};

static void mark_load(struct tail *t)
{
    FILE *f = fopen(t->mark, "re");

    if (f && fscanf(f, "%lu %ld", &t->ino, &t->off) != 2)
        t->ino = 0, t->off = 0;
    if (f)
        fclose(f);
}

static void mark_save(const struct tail *t)
{
    char tmp[600];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", t->mark);
    f = fopen(tmp, "we");
    if (!f) {
        log_warn("agent audit: %s: %s", tmp, strerror(errno));
        return;
    }
    fprintf(f, "%lu %ld\n", t->ino, t->off);
    if (fclose(f) != 0 || rename(tmp, t->mark) != 0)
        log_warn("agent audit: %s: %s", t->mark, strerror(errno));
}

/* Up to AUDIT_BATCH complete lines (AUDIT_BATCH_BYTES) from t->off; *end
 * the offset after them. */
static json_t *read_lines(struct tail *t, FILE *f, long *end)
{
    json_t *lines = json_array();
    char *buf = malloc(AUDIT_LINE_MAX + 2);
    long bytes = 0;

    *end = t->off;
    if (!buf || fseek(f, t->off, SEEK_SET) != 0) {
        free(buf);
        return lines;
    }
    while (json_array_size(lines) < AUDIT_BATCH && bytes < AUDIT_BATCH_BYTES - AUDIT_LINE_MAX &&
           fgets(buf, AUDIT_LINE_MAX + 2, f)) {
        size_t n = strlen(buf);
        if (buf[n - 1] != '\n' && n <= AUDIT_LINE_MAX)
            break; /* a line still being written: next round */
        *end += (long)n;
        bytes += (long)n;
        if (buf[n - 1] != '\n') { /* longer than any decision: skipped to its end */
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                (*end)++;
            *end += ch == '\n';
            log_warn("agent audit: a line over %d bytes skipped", AUDIT_LINE_MAX);
            continue;
        }
        buf[n - 1] = '\0';
        if (buf[0])
            json_array_append_new(lines, json_string(buf));
    }
    free(buf);
    return lines;
}

/* 0 when the control plane took the batch (its refusals are logged), -1 retry. */
static int post(struct tail *t, json_t *lines)
{
    struct worker_identity id;
    json_t *body = json_pack("{s:O}", "lines", lines), *ans = NULL;
    long status = 0;
    char err[256];
    int rc = -1;

    pthread_mutex_lock(&t->w->id_mu);
    id = t->w->id;
    pthread_mutex_unlock(&t->w->id_mu);
    if (body && id.worker_id[0] &&
        control_post(&t->ctl, "/v1/worker/audit", body, &id, AUDIT_POST_TIMEOUT_MS, &status, &ans,
                     err, sizeof(err)) == 0) {
        if (status == 200 && json_array_size(json_object_get(ans, "refused")) > 0)
            log_warn("agent audit: %zu decisions refused (not sandboxes of this worker)",
                     json_array_size(json_object_get(ans, "refused")));
        else if (status != 200)
            log_warn("agent audit: answered %ld: %s", status,
                     json_string_value(json_object_get(ans, "message")) ?: "(no message)");
        /* 400 cannot get better by sending it again: the batch is dropped. */
        rc = status == 200 || status == 400 ? 0 : -1;
    }
    explicit_bzero(&id, sizeof(id));
    json_decref(body);
    json_decref(ans);
    return rc;
}

static void round_once(struct tail *t)
{
    struct stat st;
    FILE *f = fopen(t->path, "re");
    json_t *lines;
    long end;

    if (!f)
        return; /* no decision yet */
    if (fstat(fileno(f), &st) != 0 || (unsigned long)st.st_ino != t->ino || st.st_size < t->off) {
        t->ino = (unsigned long)st.st_ino;
        t->off = 0;
    }
    do {
        lines = read_lines(t, f, &end);
        if (json_array_size(lines) == 0 || post(t, lines) != 0) {
            json_decref(lines);
            break;
        }
        t->off = end;
        mark_save(t);
        json_decref(lines);
    } while (!*t->w->stop);
    fclose(f);
}

/* A session that ended on its own is told at once, not after the long-poll
 * in flight: its caller's next request should hear it is gone. */
static void report_ended(struct tail *t)
{
    struct ctr_state *v = NULL;
    json_t *sbs;
    int n = 0;

    if (agent_take_ended(&v, &n) != 0 || n == 0) {
        free(v);
        return;
    }
    sbs = json_array();
    for (int i = 0; i < n; i++)
        if (sbtable_expect_running(&t->w->table, v[i].sbid))
            json_array_append_new(sbs, json_pack("{s:s, s:s, s:s}", "id", v[i].sbid, "state",
                                                 sb_state_name(v[i].state), "reason", v[i].reason));
    report_post(t->w, &t->ctl, sbs, NULL, n == 1 ? v[0].sbid : NULL);
    free(v);
}

static void *audit_main(void *arg)
{
    struct tail *t = arg;

    while (!*t->w->stop) {
        report_ended(t);
        round_once(t);
        sleep_unless_stopped(AUDIT_EVERY_MS, t->w->stop);
    }
    round_once(t); /* what the sessions decided as they were stopped */
    control_close(&t->ctl);
    free(t);
    return NULL;
}

int agent_audit_start(struct worker *w, pthread_t *th)
{
    struct tail *t = calloc(1, sizeof(*t));

    if (!t || control_init(&t->ctl, w->conf) != 0) {
        free(t);
        return -1;
    }
    t->w = w;
    snprintf(t->path, sizeof(t->path), "%s/audit.jsonl", w->conf->agent.gate_dir);
    snprintf(t->mark, sizeof(t->mark), "%s/agent-audit", w->conf->state_dir);
    mark_load(t);
    if (pthread_create(th, NULL, audit_main, t) != 0) {
        control_close(&t->ctl);
        free(t);
        return -1;
    }
    return 0;
}
