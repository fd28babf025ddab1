/* POST /v1/worker/heartbeat: the long-poll of the control channel.
 *
 * Delivery protocol: commands sit in the worker's stream; reading them through
 * the consumer group moves them to the pending list, where they stay until the
 * worker acknowledges them in a later heartbeat. So a command is re-delivered
 * (a) on the first poll after a handshake ("resume") — the worker crashed or
 * restarted — and (b) whenever it has stayed unacknowledged for 10 s, whichever
 * handler thread or process serves that poll. Workers apply idempotently.
 *
 * Long-polls and starvation: a blocked poll holds a handler thread. At most
 * longpoll_max polls block at once per process (below `threads`, enforced at
 * start-up); a poll over that budget answers at once with retry_after_ms, so
 * the other threads always remain for API requests. */
#include "clock.h"
#include "handlers.h"
#include "keys.h"
#include "lifecycle.h"
#include "respond.h"
#include "worker_registry.h"

#include <stdio.h>
#include <string.h>

#define REDELIVER_IDLE_MS 10000
#define MAX_BATCH 1000

static int renew_lease(struct request *req, const char *wid)
{
    char key[160], leases[128];
    long long lease = clock_now_ms() + req->conf->lease_ms;
    redisReply *r;

    snprintf(key, sizeof(key), K_WORKER, req->cred.ws, wid);
    snprintf(leases, sizeof(leases), K_LEASES, req->cred.ws);
    r = rconn_cmd(req->rc, 0, "HSET %s lease_until %lld", key, lease);
    if (!r)
        return -1;
    freeReplyObject(r);
    r = rconn_cmd(req->rc, 0, "ZADD %s XX %lld %s", leases, lease, wid);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

static int valid_stream_id(const char *s)
{
    size_t digits = strspn(s, "0123456789");
    return digits > 0 && digits < 24 && s[digits] == '-' &&
           strspn(s + digits + 1, "0123456789") == strlen(s + digits + 1) && s[digits + 1];
}

static int apply_acks(struct request *req, const char *stream, const json_t *acks)
{
    size_t i;
    json_t *a;
    redisReply *r;

    json_array_foreach(acks, i, a)
    {
        r = rconn_cmd(req->rc, 0, "XACK %s " CMD_GROUP " %s", stream, json_string_value(a));
        if (!r)
            return -1;
        freeReplyObject(r);
        r = rconn_cmd(req->rc, 0, "XDEL %s %s", stream, json_string_value(a));
        if (r)
            freeReplyObject(r);
    }
    return 0;
}

static int check_body(const json_t *b, char *err, size_t errlen)
{
    const json_t *acks = json_object_get(b, "acks"), *sbs = json_object_get(b, "sandboxes");
    size_t i;
    json_t *v;

    if ((acks && (!json_is_array(acks) || json_array_size(acks) > MAX_BATCH)) ||
        (sbs && (!json_is_array(sbs) || json_array_size(sbs) > 100000))) {
        snprintf(err, errlen, "acks and sandboxes: must be arrays");
        return -1;
    }
    json_array_foreach(acks, i, v) if (!json_is_string(v) || !valid_stream_id(json_string_value(v)))
    {
        snprintf(err, errlen, "acks[%zu]: not a command id", i);
        return -1;
    }
    json_array_foreach(sbs, i, v)
    {
        const char *id = json_string_value(json_object_get(v, "id"));
        const char *st = json_string_value(json_object_get(v, "state"));
        if (!id || !token_is_id(id) || !st ||
            (strcmp(st, "running") != 0 && strcmp(st, "exited") != 0 &&
             strcmp(st, "failed") != 0)) {
            snprintf(err, errlen,
                     "sandboxes[%zu]: needs an id and a state (running, exited, "
                     "failed)",
                     i);
            return -1;
        }
    }
    return 0;
}

static void apply_reports(struct request *req, const char *wid, const json_t *sbs, int full)
{
    char key[192];
    size_t i;
    json_t *v;
    redisReply *mine;

    json_array_foreach(sbs, i, v)
    {
        const char *reason = json_string_value(json_object_get(v, "reason"));
        lifecycle_report(req->rc, req->cred.ws, wid, json_string_value(json_object_get(v, "id")),
                         json_string_value(json_object_get(v, "state")), reason ? reason : "");
    }
    if (!full)
        return;
    /* A full report that omits a sandbox we think runs there: it is gone. */
    snprintf(key, sizeof(key), K_WORKER_SBS, req->cred.ws, wid);
    mine = rconn_cmd(req->rc, 0, "HKEYS %s", key);
    for (size_t k = 0; mine && k < mine->elements; k++) {
        int listed = 0;
        json_array_foreach(sbs, i, v) listed |=
            strcmp(json_string_value(json_object_get(v, "id")), mine->element[k]->str) == 0;
        if (!listed)
            lifecycle_report(req->rc, req->cred.ws, wid, mine->element[k]->str, "missing",
                             "not found on the worker");
    }
    if (mine)
        freeReplyObject(mine);
}

/* Turns stream entries [[id, [field, value, ...]], ...] into commands. */
static void append_entries(json_t *out, const redisReply *entries)
{
    for (size_t i = 0; entries && entries->type == REDIS_REPLY_ARRAY && i < entries->elements;
         i++) {
        const redisReply *e = entries->element[i];
        const char *type, *payload;
        json_t *cmd;
        if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
            e->element[1]->type != REDIS_REPLY_ARRAY)
            continue; /* deleted while pending */
        type = reply_hget(e->element[1], "type");
        if (!type)
            continue;
        cmd = json_pack("{s:s, s:s}", "id", e->element[0]->str, "type", type);
        if ((payload = reply_hget(e->element[1], "sandbox")))
            json_object_set_new(cmd, "sandbox", json_loads(payload, 0, NULL));
        if ((payload = reply_hget(e->element[1], "sandbox_id")))
            json_object_set_new(cmd, "sandbox_id", json_string(payload));
        json_array_append_new(out, cmd);
    }
}

/* XREADGROUP answers [[stream, entries]] or nil. */
static int read_group(struct request *req, const char *stream, const char *from, long block_ms,
                      json_t *out)
{
    redisReply *r = block_ms > 0 ? rconn_cmd(req->rc, (int)block_ms,
                                             "XREADGROUP GROUP " CMD_GROUP " " CMD_CONSUMER
                                             " COUNT 100 BLOCK %ld STREAMS %s %s",
                                             block_ms, stream, from)
                                 : rconn_cmd(req->rc, 0,
                                             "XREADGROUP GROUP " CMD_GROUP " " CMD_CONSUMER
                                             " COUNT 100 STREAMS %s %s",
                                             stream, from);

    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->elements == 2)
        append_entries(out, r->element[0]->element[1]);
    freeReplyObject(r);
    return 0;
}

static int reclaim_stale(struct request *req, const char *stream, json_t *out)
{
    redisReply *r =
        rconn_cmd(req->rc, 0, "XAUTOCLAIM %s " CMD_GROUP " " CMD_CONSUMER " %d 0-0 COUNT 100",
                  stream, REDELIVER_IDLE_MS);

    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2)
        append_entries(out, r->element[1]);
    freeReplyObject(r);
    return 0;
}

static int collect_commands(struct request *req, const char *stream, int resume, int wait,
                            json_t *out, int *over_budget)
{
    struct server *srv = req->thread->srv;
    int rv;

    if ((resume ? read_group(req, stream, "0", 0, out) : reclaim_stale(req, stream, out)) != 0)
        return -1;
    if (json_array_size(out) > 0)
        return 0;
    if (!wait) /* a worker with work in hand reports without waiting */
        return read_group(req, stream, ">", 0, out);
    if (atomic_fetch_add(&srv->longpolls, 1) >= srv->conf.longpoll_max) {
        atomic_fetch_sub(&srv->longpolls, 1);
        *over_budget = 1;
        return read_group(req, stream, ">", 0, out);
    }
    rv = read_group(req, stream, ">", req->conf->poll_ms, out);
    atomic_fetch_sub(&srv->longpolls, 1);
    return rv;
}

void h_worker_heartbeat(struct request *req)
{
    char wid[33], stream[192], err[256];
    json_t *body = request_json_body(req), *cmds;
    int over_budget = 0;

    if (!body)
        return;
    if (check_body(body, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        json_decref(body);
        return;
    }
    if (worker_authenticate(req, wid) != 1 || renew_lease(req, wid) != 0) {
        if (!req->responded)
            respond_error(req, 503, "state store unavailable; retry shortly");
        json_decref(body);
        return;
    }
    snprintf(stream, sizeof(stream), K_WORKER_CMDS, req->cred.ws, wid);
    cmds = json_array();
    if (apply_acks(req, stream, json_object_get(body, "acks")) != 0 ||
        (apply_reports(req, wid, json_object_get(body, "sandboxes"),
                       json_is_true(json_object_get(body, "full"))),
         collect_commands(req, stream, json_is_true(json_object_get(body, "resume")),
                          !json_is_false(json_object_get(body, "wait")), cmds,
                          &over_budget) != 0)) {
        json_decref(cmds);
        respond_error(req, 503, "state store unavailable; retry shortly");
    } else if (over_budget && json_array_size(cmds) == 0) {
        respond_json(req, 200, json_pack("{s:o, s:i}", "commands", cmds, "retry_after_ms", 1000));
    } else {
        respond_json(req, 200, json_pack("{s:o}", "commands", cmds));
    }
    json_decref(body);
}
