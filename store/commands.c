#include "commands.h"

#include "accounts.h"
#include "keys.h"
#include "wake.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the worker needs besides the basics: the egress policy (absent when the
 * sandbox has none), whether it is public, the per-sandbox limits (a record from before they were
 * recorded gets the workspace defaults) and whether it is secure. Never the
 * envd access token itself: the stream and the AOF would hold a working
 * credential; the heartbeat derives it as it hands the command over
 * (decision 0067). */
static void add_isolation(json_t *sb, const struct sandbox_record *rec)
{
    long pids = rec->pids_limit ? rec->pids_limit : ws_limit_defs[WS_LIMIT_PIDS].dflt;
    long disk = rec->disk_mb ? rec->disk_mb : ws_limit_defs[WS_LIMIT_DISK_MB].dflt;

    if (*rec->egress)
        json_object_set_new(sb, "egress", sandbox_json_field(rec->egress, "null"));
    /* An agent refuses a public sandbox it did not allow (decision 0062). */
    json_object_set_new(sb, "public", json_boolean(rec->public_traffic));
    json_object_set_new(sb, "pids_limit", json_integer(pids));
    json_object_set_new(sb, "disk_mb", json_integer(disk));
    if (rec->secure)
        json_object_set_new(sb, CMD_ENVD_TOKEN_DUE, json_true());
}

/* The env vars stay sealed on the stream too: the heartbeat opens them as it
 * hands the command to the worker (env_sealed becomes env). A record from
 * before sealing holds a JSON object, passed on as it is. */
static void add_env(json_t *sb, const struct sandbox_record *rec)
{
    if (!*rec->env || *rec->env == '{')
        json_object_set_new(sb, "env", sandbox_json_field(rec->env, "{}"));
    else
        json_object_set_new(sb, "env_sealed", json_string(rec->env));
}

static char *create_payload(const struct sandbox_record *rec)
{
    json_t *sb =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:I, s:I, s:o}", "id", rec->id, "workspace",
                  rec->ws, "template", rec->template_id, "runtime", rec->runtime, "tier",
                  *rec->tier ? rec->tier : "UNKNOWN", "cpu_cores", rec->cpu_cores, "memory_mb",
                  (json_int_t)rec->memory_mb, "timeout", (json_int_t)rec->timeout_s, "metadata",
                  sandbox_json_field(rec->metadata, "{}"));
    char *text;

    if (sb) {
        add_env(sb, rec);
        add_isolation(sb, rec);
        if (*rec->volumes)
            json_object_set_new(sb, "volumes", sandbox_json_field(rec->volumes, "[]"));
        if (*rec->start)
            json_object_set_new(sb, "start", sandbox_json_field(rec->start, "{}"));
        if (*rec->build)
            json_object_set_new(sb, "build", sandbox_json_field(rec->build_spec, "{}"));
        /* From a snapshot or a template of the workspace: its image, under
         * the configured template it came from. */
        if (*rec->image) {
            json_object_set_new(sb, "image", json_string(rec->image));
            json_object_set_new(
                sb, "template",
                json_string(*rec->base_template ? rec->base_template : rec->template_id));
        }
    }
    text = sb ? json_dumps(sb, JSON_COMPACT) : NULL;
    json_decref(sb);
    return text;
}

static int xadd(struct rconn *rc, const char *pool, const char *wid, const char *type,
                const char *field, const char *value)
{
    char key[192];
    redisReply *r;

    snprintf(key, sizeof(key), K_WORKER_CMDS, pool, wid);
    r = rconn_cmd(rc, 0, "XADD %s MAXLEN ~ 10000 * type %s %s %s", key, type, field, value);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

int command_send_create(struct rconn *rc, const char *pool, const char *wid,
                        const struct sandbox_record *record)
{
    char *payload = create_payload(record);
    int rv;

    if (!payload)
        return -1;
    rv = xadd(rc, pool, wid, "create", "sandbox", payload);
    free(payload);
    return rv;
}

int command_send_kill(struct rconn *rc, const char *pool, const char *wid, const char *sbid)
{
    return xadd(rc, pool, wid, "kill", "sandbox_id", sbid);
}

/* A wake outlives any waiter (block_ms is seconds): kept a minute. */
#define KILL_WAKE_TTL_MS 60000

int command_kill_expect(struct rconn *rc, const char *pool, const char *wid, const char *sbid)
{
    char key[256];
    redisReply *r;

    snprintf(key, sizeof(key), K_WORKER_KILL_WAIT, pool, wid, sbid);
    r = rconn_cmd(rc, 0, "SET %s 1 PX %d", key, KILL_WAKE_TTL_MS);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

/* KEYS: the expectation, the wake list. ARGV: the wake's ttl (ms). */
static struct rscript kill_done_script = {"kill_done",
                                          "if redis.call('DEL', KEYS[1]) == 1 then\n"
                                          "  redis.call('LPUSH', KEYS[2], '1')\n"
                                          "  redis.call('PEXPIRE', KEYS[2], ARGV[1])\n"
                                          "end\n"
                                          "return 0\n",
                                          ""};

int command_kill_done(struct rconn *rc, const char *pool, const char *wid, const char *sbid)
{
    char want[256], key[256], ttl[16];
    redisReply *r;

    snprintf(want, sizeof(want), K_WORKER_KILL_WAIT, pool, wid, sbid);
    snprintf(key, sizeof(key), K_WORKER_KILLED, pool, wid, sbid);
    snprintf(ttl, sizeof(ttl), "%d", KILL_WAKE_TTL_MS);
    const char *argv[3] = {want, key, ttl};
    r = rconn_eval(rc, &kill_done_script, 2, 1, argv);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

int command_kill_await(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                       int block_ms)
{
    char key[256];

    snprintf(key, sizeof(key), K_WORKER_KILLED, pool, wid, sbid);
    return wake_wait(rc, key, block_ms, NULL, 0);
}

int command_send_freeze(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                        int freeze, json_t *args)
{
    if (args)
        return command_send_args(rc, pool, wid, freeze ? "pause" : "resume", sbid, args);
    return xadd(rc, pool, wid, freeze ? "pause" : "resume", "sandbox_id", sbid);
}

int command_send_args(struct rconn *rc, const char *pool, const char *wid, const char *type,
                      const char *sbid, json_t *args)
{
    char key[192], *text = json_dumps(args, JSON_COMPACT);
    redisReply *r;

    json_decref(args);
    if (!text)
        return -1;
    snprintf(key, sizeof(key), K_WORKER_CMDS, pool, wid);
    r = rconn_cmd(rc, 0, "XADD %s MAXLEN ~ 10000 * type %s sandbox_id %s args %s", key, type, sbid,
                  text);
    free(text);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

int command_stream_drop(struct rconn *rc, const char *pool, const char *wid)
{
    char key[192];

    snprintf(key, sizeof(key), K_WORKER_CMDS, pool, wid);
    return reply_done(rconn_cmd(rc, 0, "DEL %s", key));
}

int command_stream_init(struct rconn *rc, const char *pool, const char *wid)
{
    char key[192];
    redisReply *r;

    snprintf(key, sizeof(key), K_WORKER_CMDS, pool, wid);
    /* BUSYGROUP (the group exists) is the common case for a returning worker. */
    r = rconn_cmd(rc, 0, "EXISTS %s", key);
    if (!r)
        return -1;
    if (reply_int(r, 0) == 1) {
        freeReplyObject(r);
        r = rconn_cmd(rc, 0, "XINFO GROUPS %s", key);
        if (r && r->elements > 0) {
            freeReplyObject(r);
            return 0;
        }
    }
    if (r)
        freeReplyObject(r);
    r = rconn_cmd(rc, 0, "XGROUP CREATE %s " CMD_GROUP " 0 MKSTREAM", key);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}
