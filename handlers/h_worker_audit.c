/* POST /v1/worker/audit: an agent-mode worker's permission-gate decisions,
 * appended to its workspace's audit stream (decision 0054).
 *
 *   {"lines": ["<one line of the gate's audit.jsonl>", ...]}   (at most 200)
 *
 * Authenticated as the heartbeat is. Only a workspace-scoped worker may
 * write (the unscoped fleet has no agents: 403), only into its own
 * workspace's stream, and only about sandboxes of that workspace placed on
 * it: a line naming any other sandbox is refused by its index, nothing of it
 * written. Every line is checked before any is written (a malformed one: 400,
 * nothing written). Each becomes one event, gate_allowed or gate_denied, by
 * worker:<id>, its reason the decision rebuilt from the checked fields only. */
#include "audit.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_store.h"
#include "worker_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 200
#define MAX_LINE 8192

struct decision {
    json_t *fields; /* the checked fields, as recorded */
    const char *sbid;
    int allowed;
};

static int one_of(const char *s, const char *const *set)
{
    for (; s && *set; set++)
        if (strcmp(s, *set) == 0)
            return 1;
    return 0;
}

static const char *str(const json_t *o, const char *k, size_t max)
{
    const char *s = json_string_value(json_object_get(o, k));

    return s && *s && strlen(s) <= max ? s : NULL;
}

/* One line of the contract's format. 0, or -1 with err naming the field. */
static int decision_parse(const char *text, struct decision *d, char *err, size_t errlen)
{
    static const char *const ops[] = {"read", "write", "list", "stat", "remove",
                                      "move", "watch", "exec", NULL};
    static const char *const branches[] = {"hardlock", "policy", "worktree", "permanent",
                                           "session",  "ask",    NULL};
    static const char *const answers[] = {"allow", "deny", NULL};
    static const char *const bys[] = {"gate", "person", "timeout", NULL};
    json_t *o = strlen(text) <= MAX_LINE ? json_loads(text, 0, NULL) : NULL;
    const char *op = str(o, "op", 16), *what = str(o, "path", 4096);
    const char *answer = str(o, "answer", 8);

    d->sbid = str(o, "sandbox", 32);
    if (!what)
        what = str(o, "command", 4096);
    if (!json_is_object(o) || !str(o, "time", 40) || !d->sbid || !token_is_id(d->sbid) ||
        !one_of(op, ops) || !what || !one_of(str(o, "branch", 16), branches) ||
        !one_of(answer, answers) || !one_of(str(o, "by", 8), bys)) {
        snprintf(err, errlen,
                 "must be a gate decision {time, sandbox, op, path or command, branch, answer, "
                 "by}");
        json_decref(o);
        return -1;
    }
    d->allowed = strcmp(answer, "allow") == 0;
    d->fields =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "time", str(o, "time", 40), "sandbox",
                  d->sbid, "op", op, strcmp(op, "exec") == 0 ? "command" : "path", what, "branch",
                  str(o, "branch", 16), "answer", answer, "by", str(o, "by", 8));
    /* From here on the checked copy's, not the parsed line's (freed below). */
    d->sbid = json_string_value(json_object_get(d->fields, "sandbox"));
    json_decref(o);
    return d->fields ? 0 : -1;
}

static void decisions_free(struct decision *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_decref(v[i].fields);
    free(v);
}

/* Every line, or NULL after answering 400. */
static struct decision *body_parse(struct request *req, const json_t *body, size_t *n)
{
    const json_t *lines = json_object_get(body, "lines");
    struct decision *v;
    char err[160];

    if (!json_is_array(lines) || json_array_size(lines) > MAX_LINES) {
        respond_error(req, 400, "lines: must be an array of at most %d audit lines", MAX_LINES);
        return NULL;
    }
    *n = json_array_size(lines);
    v = calloc(*n + 1, sizeof(*v));
    if (!v) {
        respond_error(req, 500, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < *n; i++) {
        const char *text = json_string_value(json_array_get(lines, i));
        if (!text || decision_parse(text, &v[i], err, sizeof(err)) != 0) {
            decisions_free(v, i + 1);
            respond_error(req, 400, "lines[%zu]: %s", i, text ? err : "must be a string");
            return NULL;
        }
    }
    return v;
}

/* 1 written, 0 refused (not a sandbox of this workspace placed on wid), -1 Redis. */
static int write_one(struct request *req, const char *wid, const struct decision *d)
{
    struct sandbox_record rec;
    char actor[AUDIT_ACTOR_MAX], *reason;
    int found = sandbox_read(req->rc, req->cred.ws, d->sbid, &rec), rc;

    if (found != 1)
        return found;
    if (strcmp(rec.worker, wid) != 0) {
        sandbox_record_free(&rec);
        return 0;
    }
    audit_actor_worker(actor, wid);
    reason = json_dumps(d->fields, JSON_COMPACT | JSON_SORT_KEYS);
    struct audit_event e = {.event = d->allowed ? AUDIT_GATE_ALLOWED : AUDIT_GATE_DENIED,
                            .actor = actor,
                            .sandbox = d->sbid,
                            .worker = wid,
                            .tier = rec.tier,
                            .reason = reason};
    rc = reason && audit_append(req->rc, req->cred.ws, &e) == 0 ? 1 : -1;
    free(reason);
    sandbox_record_free(&rec);
    return rc;
}

void h_worker_audit(struct request *req)
{
    char wid[33];
    json_t *body = request_json_body(req), *refused;
    struct decision *v;
    size_t n = 0, accepted = 0, i;

    if (!body)
        return;
    v = body_parse(req, body, &n);
    json_decref(body);
    if (!v || worker_authenticate(req, wid) != 1) {
        if (v)
            decisions_free(v, n);
        return;
    }
    if (!req->cred.ws[0]) {
        decisions_free(v, n);
        respond_error(req, 403, "only a workspace-scoped worker reports gate decisions");
        return;
    }
    refused = json_array();
    for (i = 0; i < n; i++) {
        int w = write_one(req, wid, &v[i]);
        if (w < 0)
            break;
        if (w == 0)
            json_array_append_new(refused, json_integer((json_int_t)i));
        accepted += (size_t)w;
    }
    decisions_free(v, n);
    if (i < n) {
        json_decref(refused);
        respond_store_down(req);
        return;
    }
    respond_json(req, 200,
                 json_pack("{s:I, s:o}", "accepted", (json_int_t)accepted, "refused", refused));
}
