/* Snapshots and forks (decision 0048), on both surfaces: E2B's POST
 * /sandboxes/{id}/snapshots, GET /snapshots, DELETE /templates/{id} (of a
 * snapshot) and POST /sandboxes/{id}/fork; native POST
 * /v1/sandboxes/{id}/snapshots, GET /v1/snapshots, DELETE /v1/snapshots/{id}.
 * A snapshot belongs to its workspace: another one's is "not found". */
#include "agent_refusal.h"
#include "e2b_view.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_store.h"
#include "sandbox_view.h"
#include "server.h"
#include "snapshot.h"
#include "snapshot_parse.h"

#include <stdlib.h>
#include <string.h>

/* The optional body's "name": 0, or -1 after answering 400. */
static int body_name(struct request *req, char name[SNAPSHOT_NAME_MAX + 1])
{
    json_t *body = request_json_optional(req);
    char err[128];
    int rc;

    if (!body)
        return -1;
    rc = snapshot_name_parse(body, name, err, sizeof(err));
    json_decref(body);
    if (rc != 0)
        respond_error(req, 400, "%s", err);
    return rc;
}

/* Takes the snapshot; 0 with id, or -1 after answering. */
static int take(struct request *req, const char *name, int fork, char id[SNAPSHOT_ID_MAX])
{
    char why[300] = "";
    enum life_outcome o = LIFE_ABSENT;

    if (agent_refusal(req, fork ? "forked" : "snapshotted"))
        return -1;
    if (token_is_id(req->params[0]))
        o = snapshot_take(req->rc, req->cred.ws, req->params[0], name, fork, req->actor,
                          (int)req->conf->create_timeout_ms, id, why, sizeof(why));
    if (o == LIFE_DONE)
        return 0;
    if (o == LIFE_ABSENT)
        NOT_FOUND_SANDBOX(req);
    else if (o == LIFE_SLOW)
        respond_error(req, 504, "the sandbox's worker did not finish the snapshot in time");
    else if (o == LIFE_FAILED)
        respond_error(req, 502, "%s", why);
    else
        respond_store_down(req);
    return -1;
}

static json_t *e2b_snapshot(const struct snapshot_record *s)
{
    json_t *names = json_array();

    if (*s->name)
        json_array_append_new(names, json_string(s->name));
    return json_pack("{s:s, s:o}", "snapshotID", s->id, "names", names);
}

static json_t *native_snapshot(const struct snapshot_record *s)
{
    char when[40];

    format_time_ms(s->created_at, when, sizeof(when));
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "snapshot_id", s->id, "name", s->name,
                     "sandbox_id", s->sandbox, "template", s->template_id, "worker_id", s->worker,
                     "created_at", when);
}

static void answer_snapshot(struct request *req, const char *id, int e2b)
{
    struct snapshot_record s;

    if (snapshot_read(req->rc, req->cred.ws, id, &s) != 1) {
        respond_store_down(req);
        return;
    }
    respond_json(req, 201, e2b ? e2b_snapshot(&s) : native_snapshot(&s));
}

void h_e2b_snapshot_create(struct request *req)
{
    char name[SNAPSHOT_NAME_MAX + 1], id[SNAPSHOT_ID_MAX];

    if (body_name(req, name) == 0 && take(req, name, 0, id) == 0)
        answer_snapshot(req, id, 1);
}

void h_sandbox_snapshot_create(struct request *req)
{
    char name[SNAPSHOT_NAME_MAX + 1], id[SNAPSHOT_ID_MAX];

    if (body_name(req, name) == 0 && take(req, name, 0, id) == 0)
        answer_snapshot(req, id, 0);
}

/* Ready, listed snapshots passing the filters, after the cursor id. */
static void list(struct request *req, int e2b)
{
    struct snapshot_list_query q;
    struct snapshot_record *v;
    size_t n;
    char err[128];
    json_t *arr;
    int past;

    if (snapshot_list_query_parse(req, e2b, &q, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (snapshot_list(req->rc, req->cred.ws, &v, &n) != 0) {
        respond_store_down(req);
        return;
    }
    arr = json_array();
    past = !*q.after;
    for (size_t i = 0; i < n; i++) {
        const struct snapshot_record *s = &v[i];
        if (!past) {
            past = strcmp(s->id, q.after) == 0;
            continue;
        }
        if (s->fork || s->state != SNAPSHOT_STATE_READY ||
            (*q.sandbox && strcmp(s->sandbox, q.sandbox) != 0) ||
            (*q.name && strcmp(s->name, q.name) != 0))
            continue;
        if (json_array_size(arr) == q.limit) {
            respond_add_header(
                req, e2b ? "X-Next-Token" : "X-Next-Cursor",
                json_string_value(json_object_get(json_array_get(arr, q.limit - 1),
                                                  e2b ? "snapshotID" : "snapshot_id")));
            break;
        }
        json_array_append_new(arr, e2b ? e2b_snapshot(s) : native_snapshot(s));
    }
    free(v);
    respond_json(req, 200, e2b ? arr : json_pack("{s:o}", "snapshots", arr));
}

void h_e2b_snapshots(struct request *req)
{
    list(req, 1);
}

void h_snapshots(struct request *req)
{
    list(req, 0);
}

/* E2B deletes a snapshot as a template. Other templates are the workers'. */
void h_snapshot_delete(struct request *req)
{
    respond_change(req,
                   snapshot_id_ok(req->params[0])
                       ? snapshot_delete(req->rc, req->cred.ws, req->params[0], req->actor)
                       : 0,
                   "snapshot");
}

/* One fork: {"sandbox": ...} or {"error": {code, message}}. */
static json_t *fork_one(struct request *req, const struct sandbox_record *src, const char *snap,
                        long timeout_s)
{
    struct sandbox_spec spec;
    struct sandbox_record rec;
    char sbid[SANDBOX_ID_MAX], msg[400];
    int status;
    json_t *out;

    if (snapshot_fork_spec(src, snap, timeout_s, &spec) != 0)
        return json_pack("{s:{s:i, s:s}}", "error", "code", 500, "message", "out of memory");
    status = sandbox_create_quiet(req, &spec, sbid, msg, sizeof(msg));
    sandbox_spec_free(&spec);
    if (status != 0)
        return json_pack("{s:{s:i, s:s}}", "error", "code", status, "message", msg);
    if (sandbox_read(req->rc, req->cred.ws, sbid, &rec) != 1)
        return json_pack("{s:{s:i, s:s}}", "error", "code", 503, "message",
                         "state store unavailable");
    out = json_pack("{s:o}", "sandbox", e2b_view(&rec, E2B_SANDBOX, req->conf));
    sandbox_record_free(&rec);
    return out;
}

/* The optional body's count and timeout: 0, or -1 after answering 400. */
static int fork_body(struct request *req, long *count, long *timeout_s)
{
    json_t *body = request_json_optional(req);
    char err[128];
    int rc;

    if (!body)
        return -1;
    rc = snapshot_fork_parse(body, count, timeout_s, err, sizeof(err));
    json_decref(body);
    if (rc != 0)
        respond_error(req, 400, "%s", err);
    return rc;
}

void h_e2b_fork(struct request *req)
{
    struct sandbox_record src;
    char snap[SNAPSHOT_ID_MAX];
    long count, timeout_s;
    json_t *results;

    if (fork_body(req, &count, &timeout_s) != 0 || take(req, "", 1, snap) != 0)
        return;
    if (sandbox_read(req->rc, req->cred.ws, req->params[0], &src) != 1) {
        snapshot_delete(req->rc, req->cred.ws, snap, req->actor);
        NOT_FOUND_SANDBOX(req);
        return;
    }
    results = json_array();
    for (long i = 0; i < count; i++)
        json_array_append_new(results, fork_one(req, &src, snap, timeout_s));
    sandbox_record_free(&src);
    /* Its forks hold the image's layers; the snapshot itself is not kept. */
    snapshot_delete(req->rc, req->cred.ws, snap, req->actor);
    respond_json(req, 201, results);
}
