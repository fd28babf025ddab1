/* identity_keys.c: a workspace's identity keys (identity_keys.h, decision
 * 0090). A hash kid -> the key's record ({"kid","x","y","sealed"} as JSON),
 * the current kid, and the retired kids by the time they leave the JWKS. */
#include "identity_keys.h"

#include "env_seal.h"
#include "keys.h"
#include "log.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 128
#define AD_MAX 128

/* {1, previous kid or ""} installed, {0, current kid} not. */
static struct rscript install_script = {
    "idkey_install",
    "local cur = redis.call('GET', KEYS[2])\n"
    "if cur and ARGV[3] ~= '1' then return {0, cur} end\n"
    "local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])\n"
    "for _, k in ipairs(gone) do redis.call('HDEL', KEYS[1], k) end\n"
    "redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])\n"
    "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])\n"
    "redis.call('SET', KEYS[2], ARGV[1])\n"
    "if cur then redis.call('ZADD', KEYS[3], ARGV[4], cur) end\n"
    "return {1, cur or ''}\n",
    ""};

/* The current key's record, or nil. */
static struct rscript current_script = {"idkey_current",
                                        "local cur = redis.call('GET', KEYS[2])\n"
                                        "if not cur then return false end\n"
                                        "return redis.call('HGET', KEYS[1], cur)\n",
                                        ""};

/* The records to publish: the current one first, then the retired ones whose
 * time has not passed. */
static struct rscript published_script = {
    "idkey_published",
    "local out = {}\n"
    "local cur = redis.call('GET', KEYS[2])\n"
    "if cur then table.insert(out, redis.call('HGET', KEYS[1], cur) or '') end\n"
    "for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[1], '+inf')) do\n"
    "  local r = redis.call('HGET', KEYS[1], k)\n"
    "  if r then table.insert(out, r) end\n"
    "end\n"
    "return out\n",
    ""};

struct idkey_keys {
    char all[KEY_MAX], current[KEY_MAX], retired[KEY_MAX];
};

static struct idkey_keys keys_of(const char *ws)
{
    struct idkey_keys k;

    snprintf(k.all, sizeof(k.all), K_IDKEYS, ws);
    snprintf(k.current, sizeof(k.current), K_IDKEY_CURRENT, ws);
    snprintf(k.retired, sizeof(k.retired), K_IDKEY_RETIRED, ws);
    return k;
}

/* The private key opens only for this workspace and kid. */
static void seal_ad(const char *ws, const char *kid, char ad[AD_MAX])
{
    snprintf(ad, AD_MAX, "idkey/%s/%s", ws, kid);
}

/* A record's public half; its sealed key into *sealed (borrowed from rec)
 * when asked. 0, or -1 when it is not a record. */
static int decode(json_t *rec, struct idkey_public *pub, const char **sealed)
{
    const char *kid = json_string_value(json_object_get(rec, "kid")),
               *x = json_string_value(json_object_get(rec, "x")),
               *y = json_string_value(json_object_get(rec, "y"));

    if (!kid || !x || !y || strlen(kid) >= IDKEY_KID_MAX || strlen(x) >= IDKEY_COORD_MAX ||
        strlen(y) >= IDKEY_COORD_MAX)
        return -1;
    snprintf(pub->kid, sizeof(pub->kid), "%s", kid);
    snprintf(pub->x, sizeof(pub->x), "%s", x);
    snprintf(pub->y, sizeof(pub->y), "%s", y);
    if (sealed)
        *sealed = json_string_value(json_object_get(rec, "sealed"));
    return sealed && !*sealed ? -1 : 0;
}

int idkey_current(struct rconn *rc, const char *ws, const char *server_secret,
                  struct idkey_public *pub, char **pem)
{
    struct idkey_keys k = keys_of(ws);
    const char *argv[2] = {k.all, k.current}, *sealed = NULL;
    char ad[AD_MAX];
    redisReply *r;
    json_t *rec;
    int found;

    *pem = NULL;
    r = rconn_eval_unwaited(rc, &current_script, 2, 0, argv);
    if (!r)
        return -1;
    rec = reply_str(r) ? json_loads(reply_str(r), 0, NULL) : NULL;
    found = reply_str(r) ? 1 : 0;
    freeReplyObject(r);
    if (found && decode(rec, pub, &sealed) == 0) {
        seal_ad(ws, pub->kid, ad);
        *pem = env_open(server_secret, ad, sealed);
    }
    json_decref(rec);
    if (found && !*pem) {
        log_msg("error", "identity key of workspace %s does not open (server secret changed?)", ws);
        return -1;
    }
    return found;
}

/* The record stored for pub, its private key sealed; malloc'd, or NULL. */
static char *record_of(const char *ws, const char *server_secret, const struct idkey_public *pub,
                       const char *pem)
{
    char ad[AD_MAX], *sealed, *text = NULL;
    json_t *o;

    seal_ad(ws, pub->kid, ad);
    if (!(sealed = env_seal(server_secret, ad, pem)))
        return NULL;
    o = json_pack("{s:s, s:s, s:s, s:s}", "kid", pub->kid, "x", pub->x, "y", pub->y, "sealed",
                  sealed);
    free(sealed);
    if (o)
        text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

int idkey_install(struct rconn *rc, const char *ws, const char *server_secret,
                  const struct idkey_public *pub, const char *pem, int rotate,
                  long long retire_until_ms, long long now_ms, char previous[IDKEY_KID_MAX])
{
    struct idkey_keys k = keys_of(ws);
    char until[24], now[24], *rec = record_of(ws, server_secret, pub, pem);
    redisReply *r;
    int installed = -1;

    previous[0] = '\0';
    if (!rec)
        return -1;
    snprintf(until, sizeof(until), "%lld", retire_until_ms);
    snprintf(now, sizeof(now), "%lld", now_ms);
    const char *argv[8] = {k.all, k.current,          k.retired, pub->kid,
                           rec,   rotate ? "1" : "0", until,     now};
    r = rconn_eval(rc, &install_script, 3, 5, argv);
    free(rec);
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_INTEGER && r->element[1]->str) {
        installed = (int)r->element[0]->integer;
        if (installed == 1)
            snprintf(previous, IDKEY_KID_MAX, "%s", r->element[1]->str);
    }
    if (r)
        freeReplyObject(r);
    return installed;
}

int idkey_published(struct rconn *rc, const char *ws, long long now_ms,
                    struct idkey_public out[IDKEY_PUBLISHED_MAX], size_t *n)
{
    struct idkey_keys k = keys_of(ws);
    char now[24];
    const char *argv[4] = {k.all, k.current, k.retired, now};
    redisReply *r;

    *n = 0;
    snprintf(now, sizeof(now), "%lld", now_ms);
    r = rconn_eval_unwaited(rc, &published_script, 3, 1, argv);
    if (!r)
        return -1;
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        json_t *rec = r->element[i]->str ? json_loads(r->element[i]->str, 0, NULL) : NULL;
        if (*n < IDKEY_PUBLISHED_MAX && decode(rec, &out[*n], NULL) == 0)
            (*n)++;
        json_decref(rec);
    }
    freeReplyObject(r);
    return 0;
}
