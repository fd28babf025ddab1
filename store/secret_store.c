/* secret_store.c: a workspace's secrets (secret_store.h, decision 0090).
 *
 * One hash per secret holds its fields and its sealed versions ("v:<n>"),
 * so a delete removes every version in one DEL; a name index (name -> id)
 * and a creation-ordered set (the list's paging) sit beside it in the
 * workspace's slot. Each change is one script. */
#include "secret_store.h"

#include "audit.h"
#include "clock.h"
#include "env_seal.h"
#include "keys.h"
#include "log.h"
#include "record_read.h"
#include "secret.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 256
#define AD_MAX 160
#define UPDATE_TRIES 5 /* a version taken by a racing update: seal again for the next */

static struct rscript create_script = {
    "secret_create",
    "if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end\n"
    "redis.call('HSET', KEYS[2], 'id', ARGV[2], 'name', ARGV[1], 'version', 1,\n"
    "  'metadata', ARGV[3], 'created_at', ARGV[4], 'updated_at', ARGV[4], 'v:1', ARGV[5])\n"
    "redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])\n"
    "return 1\n",
    ""};

/* -1 no such secret, -2 its version moved on (seal again), else the new one. */
static struct rscript update_script = {
    "secret_update",
    "local v = redis.call('HGET', KEYS[1], 'version')\n"
    "if not v then return -1 end\n"
    "if v ~= ARGV[1] then return -2 end\n"
    "local n = tonumber(v) + 1\n"
    "redis.call('HSET', KEYS[1], 'version', n, 'updated_at', ARGV[4], 'v:' .. n, ARGV[5])\n"
    "if ARGV[2] == '1' then redis.call('HSET', KEYS[1], 'metadata', ARGV[3]) end\n"
    "redis.call('HDEL', KEYS[1], 'v:' .. (n - tonumber(ARGV[6])))\n"
    "return n\n",
    ""};

/* {name, version} of the secret removed, or nil. */
static struct rscript delete_script = {"secret_delete",
                                       "local s = redis.call('HMGET', KEYS[2], 'name', 'version')\n"
                                       "if not s[1] then return false end\n"
                                       "redis.call('DEL', KEYS[2])\n"
                                       "redis.call('HDEL', KEYS[1], s[1])\n"
                                       "redis.call('ZREM', KEYS[3], ARGV[1])\n"
                                       "return s\n",
                                       ""};

/* {version, sealed} of the current version, or nil. */
static struct rscript current_script = {"secret_current",
                                        "local v = redis.call('HGET', KEYS[1], 'version')\n"
                                        "if not v then return false end\n"
                                        "return {v, redis.call('HGET', KEYS[1], 'v:' .. v)}\n",
                                        ""};

/* A page of ARGV[2] ids (or a few more: those created in the same ms as the
 * cursor) after ARGV[1] ("" the start), or nil when it is not listed. Ids
 * are ordered by creation time, then id (the set's order). */
static struct rscript page_script = {
    "secret_page",
    "local n = tonumber(ARGV[2])\n"
    "if ARGV[1] == '' then return redis.call('ZRANGE', KEYS[1], 0, n - 1) end\n"
    "local s = redis.call('ZSCORE', KEYS[1], ARGV[1])\n"
    "if not s then return false end\n"
    "local out, past = {}, false\n"
    "for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], s, s)) do\n"
    "  if past then table.insert(out, id) end\n"
    "  if id == ARGV[1] then past = true end\n"
    "end\n"
    "if #out < n then\n"
    "  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. s, '+inf', 'LIMIT', 0,\n"
    "                                 n - #out)) do\n"
    "    table.insert(out, id)\n"
    "  end\n"
    "end\n"
    "return out\n",
    ""};

void secret_record_free(struct secret_record *s)
{
    free(s->metadata);
    s->metadata = NULL;
}

int secret_id_ok(const char *s)
{
    size_t n = strlen(SECRET_ID_PREFIX);

    if (strncmp(s, SECRET_ID_PREFIX, n) != 0 || strlen(s + n) != 20)
        return 0;
    return strspn(s + n, "0123456789abcdef") == 20;
}

static void keys_of(const char *ws, const char *id, char names[KEY_MAX], char one[KEY_MAX],
                    char all[KEY_MAX])
{
    snprintf(names, KEY_MAX, K_SECRET_NAMES, ws);
    snprintf(one, KEY_MAX, K_SECRET, ws, id);
    snprintf(all, KEY_MAX, K_SECRETS, ws);
}

/* The associated data a version is sealed with: it opens only there. */
static void seal_ad(const char *ws, const char *id, long long version, char ad[AD_MAX])
{
    snprintf(ad, AD_MAX, "secret/%s/%s/%lld", ws, id, version);
}

static void audit(struct rconn *rc, const char *ws, const char *event, const char *actor,
                  const char *name, const char *id, long long version)
{
    json_t *o =
        json_pack("{s:s, s:s, s:I}", "secret", name, "id", id, "version", (json_int_t)version);
    char *reason = o ? json_dumps(o, JSON_COMPACT) : NULL;
    struct audit_event e = {.event = event, .actor = actor, .reason = reason};

    audit_append(rc, ws, &e);
    free(reason);
    json_decref(o);
}

/* The id ref stands for in ws: itself when spelled as an id, else the name
 * index's. 1, 0 none, -1 Redis. */
static int id_of(struct rconn *rc, const char *ws, const char *ref, char id[SECRET_ID_MAX])
{
    char names[KEY_MAX];
    redisReply *r;
    int found;

    if (secret_id_ok(ref)) {
        snprintf(id, SECRET_ID_MAX, "%s", ref);
        return 1;
    }
    snprintf(names, sizeof(names), K_SECRET_NAMES, ws);
    r = rconn_cmd(rc, 0, "HGET %s %s", names, ref);
    if (!r)
        return -1;
    found = reply_str(r) != NULL && secret_id_ok(reply_str(r));
    if (found)
        snprintf(id, SECRET_ID_MAX, "%s", reply_str(r));
    freeReplyObject(r);
    return found;
}

static const char *elem(const redisReply *r, size_t i)
{
    return i < r->elements && r->element[i]->str ? r->element[i]->str : NULL;
}

/* The record of id (never its values). 1, 0 none, -1 Redis. */
static int read_id(struct rconn *rc, const char *ws, const char *id, struct secret_record *out)
{
    char one[KEY_MAX];
    redisReply *r;
    int found;

    memset(out, 0, sizeof(*out));
    snprintf(one, sizeof(one), K_SECRET, ws, id);
    r = rconn_cmd(rc, 0, "HMGET %s id name version metadata created_at updated_at", one);
    if (!r)
        return -1;
    found = r->type == REDIS_REPLY_ARRAY && elem(r, 0) && elem(r, 1);
    if (found) {
        snprintf(out->id, sizeof(out->id), "%s", elem(r, 0));
        snprintf(out->name, sizeof(out->name), "%s", elem(r, 1));
        out->version = elem(r, 2) ? atoll(elem(r, 2)) : 0;
        out->metadata = strdup(elem(r, 3) ? elem(r, 3) : "{}");
        out->created_at = elem(r, 4) ? atoll(elem(r, 4)) : 0;
        out->updated_at = elem(r, 5) ? atoll(elem(r, 5)) : 0;
        found = out->metadata ? 1 : -1;
    }
    freeReplyObject(r);
    return found;
}

int secret_find(struct rconn *rc, const char *ws, const char *ref, struct secret_record *out)
{
    char id[SECRET_ID_MAX];
    int found = id_of(rc, ws, ref, id);

    memset(out, 0, sizeof(*out));
    return found == 1 ? read_id(rc, ws, id, out) : found;
}

int secret_create(struct rconn *rc, const char *ws, const char *server_secret, const char *name,
                  const char *value, const char *metadata, const char *actor,
                  struct secret_record *out)
{
    char hex[21], id[SECRET_ID_MAX], ad[AD_MAX], now[24], names[KEY_MAX], one[KEY_MAX],
        all[KEY_MAX];
    char *sealed;
    int n;

    memset(out, 0, sizeof(*out));
    if (secret_random_hex(hex, 10) != 0)
        return -1;
    snprintf(id, sizeof(id), "%s%s", SECRET_ID_PREFIX, hex);
    seal_ad(ws, id, 1, ad);
    if (!(sealed = env_seal(server_secret, ad, value)))
        return -1;
    snprintf(now, sizeof(now), "%lld", (long long)clock_now_ms());
    keys_of(ws, id, names, one, all);
    const char *argv[8] = {names, one, all, name, id, metadata, now, sealed};
    n = record_eval_int(rc, &create_script, 3, 5, argv);
    free(sealed);
    if (n != 1)
        return n;
    audit(rc, ws, AUDIT_SECRET_CREATE, actor, name, id, 1);
    return read_id(rc, ws, id, out) == 1 ? 1 : -1;
}

/* One try at version+1 of id: the new version, -1 none, -2 raced, -3 failed. */
static long long update_once(struct rconn *rc, const char *ws, const char *server_secret,
                             const char *id, const char *value, const char *metadata)
{
    char one[KEY_MAX], ad[AD_MAX], cur[24], now[24], kept[8];
    struct secret_record s;
    char *sealed;
    long long n;
    int found = read_id(rc, ws, id, &s);

    if (found != 1)
        return found == 0 ? -1 : -3;
    secret_record_free(&s);
    seal_ad(ws, id, s.version + 1, ad);
    if (!(sealed = env_seal(server_secret, ad, value)))
        return -3;
    snprintf(one, sizeof(one), K_SECRET, ws, id);
    snprintf(cur, sizeof(cur), "%lld", s.version);
    snprintf(now, sizeof(now), "%lld", (long long)clock_now_ms());
    snprintf(kept, sizeof(kept), "%d", SECRET_VERSIONS_KEPT);
    const char *argv[7] = {one,    cur, metadata ? "1" : "0", metadata ? metadata : "", now,
                           sealed, kept};
    redisReply *r = rconn_eval(rc, &update_script, 1, 6, argv);
    free(sealed);
    n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -3;
    if (r)
        freeReplyObject(r);
    return n;
}

int secret_update(struct rconn *rc, const char *ws, const char *server_secret, const char *ref,
                  const char *value, const char *metadata, const char *actor,
                  struct secret_record *out)
{
    char id[SECRET_ID_MAX];
    int found = id_of(rc, ws, ref, id);
    long long v = -2;

    memset(out, 0, sizeof(*out));
    if (found != 1)
        return found;
    for (int i = 0; i < UPDATE_TRIES && v == -2; i++)
        v = update_once(rc, ws, server_secret, id, value, metadata);
    if (v == -1)
        return 0;
    if (v < 0)
        return -1;
    found = read_id(rc, ws, id, out);
    if (found == 1)
        audit(rc, ws, AUDIT_SECRET_UPDATE, actor, out->name, id, v);
    return found == 1 ? 1 : -1;
}

int secret_delete(struct rconn *rc, const char *ws, const char *ref, const char *actor)
{
    char id[SECRET_ID_MAX], names[KEY_MAX], one[KEY_MAX], all[KEY_MAX];
    int found = id_of(rc, ws, ref, id);
    redisReply *r;

    if (found != 1)
        return found;
    keys_of(ws, id, names, one, all);
    const char *argv[4] = {names, one, all, id};
    r = rconn_eval(rc, &delete_script, 3, 1, argv);
    if (!r)
        return -1;
    found = r->type == REDIS_REPLY_ARRAY && elem(r, 0) != NULL;
    if (found)
        audit(rc, ws, AUDIT_SECRET_DELETE, actor, elem(r, 0), id,
              elem(r, 1) ? atoll(elem(r, 1)) : 0);
    freeReplyObject(r);
    return found;
}

void secret_list_free(struct secret_record *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        secret_record_free(&v[i]);
    free(v);
}

/* The records page's ids name, leaving out those deleted meanwhile. 0, -1. */
static int read_page(struct rconn *rc, const char *ws, const redisReply *ids, size_t limit,
                     struct secret_record **out, size_t *n, int *more)
{
    size_t take = ids->elements < limit ? ids->elements : limit;

    *more = ids->elements > limit;
    *out = calloc(take ? take : 1, sizeof(**out));
    if (!*out)
        return -1;
    for (size_t i = 0; i < take; i++) {
        int found = elem(ids, i) ? read_id(rc, ws, elem(ids, i), &(*out)[*n]) : 0;
        if (found < 0) {
            secret_list_free(*out, *n);
            *out = NULL;
            *n = 0;
            return -1;
        }
        *n += (size_t)found;
    }
    return 0;
}

int secret_list(struct rconn *rc, const char *ws, const char *after, size_t limit,
                struct secret_record **out, size_t *n, int *more)
{
    char all[KEY_MAX], count[24];
    const char *argv[3] = {all, after, count};
    redisReply *r;
    int rv;

    *out = NULL;
    *n = 0;
    *more = 0;
    snprintf(all, sizeof(all), K_SECRETS, ws);
    snprintf(count, sizeof(count), "%zu", limit + 1); /* one more: is there a next page? */
    r = rconn_eval_unwaited(rc, &page_script, 1, 2, argv);
    if (!r)
        return -1;
    if (r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        return 0;
    }
    rv = read_page(rc, ws, r, limit, out, n, more);
    freeReplyObject(r);
    return rv == 0 ? 1 : -1;
}

int secret_resolve(struct rconn *rc, const char *ws, const char *name, const char *server_secret,
                   char **value)
{
    char id[SECRET_ID_MAX], one[KEY_MAX], ad[AD_MAX];
    int found = secret_id_ok(name) ? 0 : id_of(rc, ws, name, id);
    redisReply *r;

    *value = NULL;
    if (found != 1)
        return found;
    snprintf(one, sizeof(one), K_SECRET, ws, id);
    const char *argv[1] = {one};
    r = rconn_eval_unwaited(rc, &current_script, 1, 0, argv);
    if (!r)
        return -1;
    found = r->type == REDIS_REPLY_ARRAY && elem(r, 0) && elem(r, 1);
    if (found) {
        seal_ad(ws, id, atoll(elem(r, 0)), ad);
        *value = env_open(server_secret, ad, elem(r, 1));
        if (!*value) {
            log_msg("error", "secret %s of workspace %s does not open (server secret changed?)", id,
                    ws);
            found = -1;
        }
    }
    freeReplyObject(r);
    return found;
}
