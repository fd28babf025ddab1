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
#include "env_seal.h"
#include "handlers.h"
#include "keys.h"
#include "lifecycle.h"
#include "log.h"
#include "respond.h"
#include "worker_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REDELIVER_IDLE_MS 10000
#define MAX_BATCH 1000

/* The lease, and what the worker says stops it taking sandboxes ("" when
 * nothing does; NULL: not said, unchanged): placement passes over a worker
 * that names a problem. */
static int renew_lease(struct request *req, const char *wid, const char *problem)
{
    char key[160], leases[128];
    long long lease = clock_now_ms() + req->conf->lease_ms;
    redisReply *r;

    snprintf(key, sizeof(key), K_WORKER, req->cred.ws, wid);
    snprintf(leases, sizeof(leases), K_LEASES, req->cred.ws);
    r = problem ? rconn_cmd(req->rc, 0, "HSET %s lease_until %lld problem %s", key, lease, problem)
                : rconn_cmd(req->rc, 0, "HSET %s lease_until %lld", key, lease);
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
    const json_t *problem = json_object_get(b, "problem");
    size_t i;
    json_t *v;

    if ((acks && (!json_is_array(acks) || json_array_size(acks) > MAX_BATCH)) ||
        (sbs && (!json_is_array(sbs) || json_array_size(sbs) > 100000))) {
        snprintf(err, errlen, "acks and sandboxes: must be arrays");
        return -1;
    }
    if (problem && (!json_is_string(problem) || json_string_length(problem) > 255)) {
        snprintf(err, errlen, "problem: must be a string of at most 255 bytes");
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

/* A create's env vars are sealed in Redis (common/env_seal.h): opened here,
 * just before they go to the worker over TLS. One that does not open (the
 * secret changed, or the stream was altered) is never delivered: the command
 * is dropped and the sandbox fails, naming why. 0 delivered, -1 dropped. */
static int open_env(struct request *req, const char *wid, const char *stream, const char *entry,
                    json_t *sb)
{
    const char *sealed = json_string_value(json_object_get(sb, "env_sealed"));
    const char *sbid = json_string_value(json_object_get(sb, "id"));
    char *plain;
    json_t *env;
    redisReply *r;

    if (!sealed)
        return 0;
    plain = sbid ? env_open(req->conf->server_secret, sbid, sealed) : NULL;
    env = plain ? json_loads(plain, 0, NULL) : NULL;
    free(plain);
    json_object_del(sb, "env_sealed");
    if (json_is_object(env))
        return json_object_set_new(sb, "env", env) == 0 ? 0 : -1;
    json_decref(env);
    log_err("create of sandbox %s: its env vars do not open (secret_file changed?)",
            sbid ? sbid : "?");
    if ((r = rconn_cmd(req->rc, 0, "XACK %s " CMD_GROUP " %s", stream, entry)))
        freeReplyObject(r);
    if ((r = rconn_cmd(req->rc, 0, "XDEL %s %s", stream, entry)))
        freeReplyObject(r);
    if (sbid)
        lifecycle_report(req->rc, req->cred.ws, wid, sbid, "failed",
                         "its env vars could not be decrypted");
    return -1;
}

/* Turns stream entries [[id, [field, value, ...]], ...] into commands. */
static void append_entries(struct request *req, const char *wid, const char *stream, json_t *out,
                           const redisReply *entries)
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
        if ((payload = reply_hget(e->element[1], "sandbox"))) {
            json_t *sb = json_loads(payload, 0, NULL);
            if (sb && open_env(req, wid, stream, e->element[0]->str, sb) != 0) {
                json_decref(sb);
                json_decref(cmd);
                continue;
            }
            json_object_set_new(cmd, "sandbox", sb);
        }
        if ((payload = reply_hget(e->element[1], "sandbox_id")))
            json_object_set_new(cmd, "sandbox_id", json_string(payload));
        json_array_append_new(out, cmd);
    }
}

/* XREADGROUP without blocking (blocking waits go through wait_for_commands);
 * it answers [[stream, entries]] or nil. */
static int read_group(struct request *req, const char *wid, const char *stream, const char *from,
                      json_t *out)
{
    redisReply *r = rconn_cmd(
        req->rc, 0, "XREADGROUP GROUP " CMD_GROUP " " CMD_CONSUMER " COUNT 100 STREAMS %s %s",
        stream, from);

    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->elements == 2)
        append_entries(req, wid, stream, out, r->element[0]->element[1]);
    freeReplyObject(r);
    return 0;
}

static int reclaim_stale(struct request *req, const char *wid, const char *stream, json_t *out)
{
    redisReply *r =
        rconn_cmd(req->rc, 0, "XAUTOCLAIM %s " CMD_GROUP " " CMD_CONSUMER " %d 0-0 COUNT 100",
                  stream, REDELIVER_IDLE_MS);

    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2)
        append_entries(req, wid, stream, out, r->element[1]);
    freeReplyObject(r);
    return 0;
}

/* Takes new commands only while this poll is the worker's latest: a poll the
 * worker abandoned (it restarted, or cut the poll short) must not swallow a
 * command whose answer would go nowhere. So a waiting poll takes a number
 * (poll_seq, also bumped by every handshake), waits with a plain XREAD that
 * takes nothing, and reads through the group only in this script, which checks
 * the number first. Answers {1, entries}, {0, last id} (nothing new: wait for
 * ids after it) or {-1} (superseded). */
static struct rscript take_script = {
    "heartbeat_take",
    "if redis.call('HGET', KEYS[1], 'poll_seq') ~= ARGV[1] then return {-1} end\n"
    "local r = redis.call('XREADGROUP', 'GROUP', '" CMD_GROUP "', '" CMD_CONSUMER "',\n"
    "  'COUNT', 100, 'STREAMS', KEYS[2], '>')\n"
    "if r and r[1] and #r[1][2] > 0 then return {1, r[1][2]} end\n"
    "local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)\n"
    "if last[1] then return {0, last[1][1]} end\n"
    "return {0, '0-0'}\n",
    ""};

/* 1 took commands (or was superseded: nothing more to do), 0 nothing new with
 * last set, -1 Redis failed. */
static int take_if_current(struct request *req, const char *wid, const char *wkey,
                           const char *stream, const char *seq, json_t *out, char *last,
                           size_t lastlen)
{
    const char *argv[3] = {wkey, stream, seq};
    redisReply *r = rconn_eval(req->rc, &take_script, 2, 1, argv);
    int rv = -1;

    if (r && r->type == REDIS_REPLY_ARRAY && r->elements >= 1) {
        rv = r->element[0]->integer != 0;
        if (r->element[0]->integer == 1 && r->elements == 2)
            append_entries(req, wid, stream, out, r->element[1]);
        else if (r->element[0]->integer == 0 && r->elements == 2 && r->element[1]->str)
            snprintf(last, lastlen, "%s", r->element[1]->str);
    }
    if (r)
        freeReplyObject(r);
    return rv;
}

/* The long wait: until a command comes for this poll, it is superseded, or
 * poll_ms pass. */
static int wait_for_commands(struct request *req, const char *wid, const char *stream, json_t *out)
{
    char wkey[160], seq[32], last[48];
    int64_t deadline = clock_now_ms() + req->conf->poll_ms;
    redisReply *r;
    int rv;

    snprintf(wkey, sizeof(wkey), K_WORKER, req->cred.ws, wid);
    r = rconn_cmd(req->rc, 0, "HINCRBY %s poll_seq 1", wkey);
    if (!r || r->type != REDIS_REPLY_INTEGER) {
        if (r)
            freeReplyObject(r);
        return -1;
    }
    snprintf(seq, sizeof(seq), "%lld", r->integer);
    freeReplyObject(r);
    for (;;) {
        int64_t left = deadline - clock_now_ms();
        if ((rv = take_if_current(req, wid, wkey, stream, seq, out, last, sizeof(last))) != 0)
            return rv < 0 ? -1 : 0;
        if (left <= 0)
            return 0;
        r = rconn_cmd(req->rc, (int)left, "XREAD COUNT 1 BLOCK %lld STREAMS %s %s", (long long)left,
                      stream, last);
        if (!r)
            return -1;
        freeReplyObject(r);
    }
}

static int collect_commands(struct request *req, const char *wid, const char *stream, int resume,
                            int wait, json_t *out, int *over_budget)
{
    struct server *srv = req->thread->srv;
    int rv;

    if ((resume ? read_group(req, wid, stream, "0", out) : reclaim_stale(req, wid, stream, out)) !=
        0)
        return -1;
    if (json_array_size(out) > 0)
        return 0;
    if (!wait) /* a worker with work in hand reports without waiting */
        return read_group(req, wid, stream, ">", out);
    if (atomic_fetch_add(&srv->longpolls, 1) >= srv->conf.longpoll_max) {
        atomic_fetch_sub(&srv->longpolls, 1);
        *over_budget = 1;
        return read_group(req, wid, stream, ">", out);
    }
    rv = wait_for_commands(req, wid, stream, out);
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
    if (worker_authenticate(req, wid) != 1 ||
        renew_lease(req, wid, json_string_value(json_object_get(body, "problem"))) != 0) {
        if (!req->responded)
            respond_store_down(req);
        json_decref(body);
        return;
    }
    if (json_is_true(json_object_get(body, "report_only"))) {
        /* A death reported beside the long-poll: no acks, no commands. */
        apply_reports(req, wid, json_object_get(body, "sandboxes"), 0);
        respond_json(req, 200, json_pack("{s:[]}", "commands"));
        json_decref(body);
        return;
    }
    snprintf(stream, sizeof(stream), K_WORKER_CMDS, req->cred.ws, wid);
    cmds = json_array();
    if (apply_acks(req, stream, json_object_get(body, "acks")) != 0 ||
        (apply_reports(req, wid, json_object_get(body, "sandboxes"),
                       json_is_true(json_object_get(body, "full"))),
         collect_commands(req, wid, stream, json_is_true(json_object_get(body, "resume")),
                          !json_is_false(json_object_get(body, "wait")), cmds,
                          &over_budget) != 0)) {
        json_decref(cmds);
        respond_store_down(req);
    } else if (over_budget && json_array_size(cmds) == 0) {
        respond_json(req, 200, json_pack("{s:o, s:i}", "commands", cmds, "retry_after_ms", 1000));
    } else {
        respond_json(req, 200, json_pack("{s:o}", "commands", cmds));
    }
    json_decref(body);
}
