#include "commands.h"

#include "accounts.h"
#include "keys.h"
#include "sandbox_token.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSON field stored as text in the record, parsed back (or the fallback). */
static json_t *record_json(const redisReply *rec, const char *field, const char *fallback)
{
    const char *text = reply_hget(rec, field);
    json_t *v = json_loads(text ? text : fallback, 0, NULL);

    return v ? v : json_loads(fallback, 0, NULL);
}

static const char *field_or(const redisReply *rec, const char *field, const char *dflt)
{
    const char *v = reply_hget(rec, field);
    return v ? v : dflt;
}

static json_int_t int_field(const redisReply *rec, const char *field, long dflt)
{
    const char *v = reply_hget(rec, field);
    return v && *v ? (json_int_t)atoll(v) : (json_int_t)dflt;
}

/* What the worker needs besides the basics: the egress policy (absent when the
 * sandbox has none), the per-sandbox limits and a secure sandbox's envd token. */
static void add_isolation(json_t *sb, const redisReply *rec, const char *gateway_secret)
{
    char token[SECRET_MAC_HEX];
    const char *egress = reply_hget(rec, "egress");

    if (egress && *egress)
        json_object_set_new(sb, "egress", record_json(rec, "egress", "null"));
    json_object_set_new(
        sb, "pids_limit",
        json_integer(int_field(rec, "pids_limit", ws_limit_defs[WS_LIMIT_PIDS].dflt)));
    json_object_set_new(
        sb, "disk_mb",
        json_integer(int_field(rec, "disk_mb", ws_limit_defs[WS_LIMIT_DISK_MB].dflt)));
    if (strcmp(field_or(rec, "secure", "0"), "1") == 0) {
        sandbox_token(gateway_secret, SANDBOX_TOKEN_ENVD, field_or(rec, "id", ""), token);
        json_object_set_new(sb, "envd_access_token", json_string(token));
    }
}

/* The env vars stay sealed on the stream too: the heartbeat opens them as it
 * hands the command to the worker (env_sealed becomes env). A record from
 * before sealing holds a JSON object, passed on as it is. */
static void add_env(json_t *sb, const redisReply *rec)
{
    const char *env = field_or(rec, "env", "{}");

    if (*env == '{')
        json_object_set_new(sb, "env", record_json(rec, "env", "{}"));
    else
        json_object_set_new(sb, "env_sealed", json_string(env));
}

static char *create_payload(const redisReply *rec, const char *gateway_secret)
{
    json_t *sb = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:f, s:I, s:I, s:o}", "id", field_or(rec, "id", ""), "workspace",
        field_or(rec, "ws", ""), "template", field_or(rec, "template", ""), "runtime",
        field_or(rec, "runtime", ""), "tier", field_or(rec, "tier", "UNKNOWN"), "cpu_cores",
        atof(field_or(rec, "cpu_cores", "1")), "memory_mb", int_field(rec, "memory_mb", 512),
        "timeout", int_field(rec, "timeout", 300), "metadata", record_json(rec, "metadata", "{}"));
    char *text;

    if (sb) {
        add_env(sb, rec);
        add_isolation(sb, rec, gateway_secret);
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

int command_send_create(struct rconn *rc, const char *gateway_secret, const char *pool,
                        const char *wid, const redisReply *record)
{
    char *payload = create_payload(record, gateway_secret);
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
