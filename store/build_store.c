/* build_store.c: a template's builds and their logs (docs/templates.md). A
 * build's state moves waiting -> building -> ready|error, each step one
 * script, so a worker's report and the control plane's verdict never both
 * end one build. */
#include "template_store.h"

#include "clock.h"
#include "id_list.h"
#include "keys.h"
#include "record_read.h"
#include "registry_names.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT RECORD_TEXT
#define NUM RECORD_NUM

static void fill(const redisReply *h, void *out)
{
    struct build_record *b = out;

    memset(b, 0, sizeof(*b));
    for (size_t i = 0; h && i + 1 < h->elements; i += 2) {
        const char *k = h->element[i]->str, *v = h->element[i + 1]->str;
        if (!k || !v)
            continue;
        TEXT("id", b->id)
        TEXT("template", b->template_id)
        TEXT("worker", b->worker)
        TEXT("sandbox", b->sandbox)
        TEXT("step", b->step)
        TEXT("reason", b->reason)
        TEXT("state", b->state_text)
        TEXT("image", b->image)
        TEXT("root", b->root)
        TEXT("start_cmd", b->start_cmd)
        TEXT("ready_cmd", b->ready_cmd)
        TEXT("user", b->user)
        TEXT("workdir", b->workdir)
        TEXT("target", b->target)
        TEXT("tags", b->tags)
        NUM("cpu", b->cpu)
        NUM("memory_mb", b->memory_mb)
        NUM("created_at", b->created_at)
        NUM("updated_at", b->updated_at)
        NUM("finished_at", b->finished_at)
        NUM("size", b->size_bytes)
    }
    b->state = build_state_parse(b->state_text);
}
#undef TEXT
#undef NUM

int build_read(struct rconn *rc, const char *ws, const char *bid, struct build_record *out)
{
    char key[160];

    snprintf(key, sizeof(key), K_BLD, ws, bid);
    return record_hash_read(rc, key, fill, out);
}

static int read_one(struct rconn *rc, const char *ws, const char *id, void *item)
{
    return build_read(rc, ws, id, item);
}

int build_list(struct rconn *rc, const char *ws, const char *tpl, struct build_record **out,
               size_t *n)
{
    char key[160];
    void *items;
    int rv;

    snprintf(key, sizeof(key), K_TPL_BUILDS, ws, tpl);
    rv = id_list_read_all(rc, ws, rconn_cmd(rc, 0, "ZRANGE %s 0 99 REV", key), sizeof(**out),
                          read_one, &items, n);
    *out = items;
    return rv;
}

int build_make(struct rconn *rc, const char *ws, const char *tpl, long cpu, long memory_mb,
               char bid[TEMPLATE_ID_MAX])
{
    char key[160], builds[160], index[96];
    long long now = clock_now_ms();

    snprintf(bid, TEMPLATE_ID_MAX, BUILD_PREFIX);
    if (secret_random_hex(bid + strlen(BUILD_PREFIX), 10) != 0)
        return -1;
    snprintf(key, sizeof(key), K_BLD, ws, bid);
    snprintf(builds, sizeof(builds), K_TPL_BUILDS, ws, tpl);
    snprintf(index, sizeof(index), K_BLD_INDEX, bid);
    if (reply_done(rconn_cmd(rc, 0,
                             "HSET %s id %s template %s state waiting cpu %ld memory_mb %ld "
                             "created_at %lld updated_at %lld",
                             key, bid, tpl, cpu, memory_mb, now, now)) != 0 ||
        reply_done(rconn_cmd(rc, 0, "ZADD %s %lld %s", builds, now, bid)) != 0)
        return -1;
    return reply_done(rconn_cmd(rc, 0, "SET %s %s", index, ws));
}

int build_workspace(struct rconn *rc, const char *bid, char ws[33])
{
    char index[96];

    snprintf(index, sizeof(index), K_BLD_INDEX, bid);
    return record_string_read(rc, index, ws, 33);
}

/* The template's key is its prefix (ARGV[1]) and the build's "template":
 * one script reads and writes both, in the workspace's slot. */
static struct rscript begin_script = {
    "build_begin",
    "local b = redis.call('HMGET', KEYS[1], 'state', 'template')\n"
    "if b[1] ~= 'waiting' then return 0 end\n"
    "redis.call('HSET', KEYS[1], 'state', 'building', 'worker', ARGV[2], 'sandbox', ARGV[3],\n"
    "  'updated_at', ARGV[4])\n"
    "redis.call('HSET', ARGV[1] .. b[2], 'building', ARGV[5])\n"
    "return 1\n",
    ""};

/* key and template-key prefix of build bid, and now: the scripts' common
 * arguments. */
struct build_keys {
    char key[160], tpl[160], active[160], now[24];
};

static struct build_keys keys_of(const char *ws, const char *bid)
{
    struct build_keys k;

    snprintf(k.key, sizeof(k.key), K_BLD, ws, bid);
    snprintf(k.tpl, sizeof(k.tpl), K_TPL, ws, "");
    snprintf(k.active, sizeof(k.active), K_BLD_ACTIVE, ws);
    snprintf(k.now, sizeof(k.now), "%lld", (long long)clock_now_ms());
    return k;
}

int build_begin(struct rconn *rc, const char *ws, const char *bid, const char *wid,
                const char *sbid)
{
    struct build_keys k = keys_of(ws, bid);
    const char *argv[6];

    argv[0] = k.key;
    argv[1] = k.tpl;
    argv[2] = wid;
    argv[3] = sbid;
    argv[4] = k.now;
    argv[5] = bid;
    return record_eval_int(rc, &begin_script, 1, 5, argv);
}

/* ARGV[2] "" lets anyone end it (the control plane's own verdict). */
static struct rscript end_script = {
    "build_end",
    "local b = redis.call('HMGET', KEYS[1], 'state', 'worker', 'template')\n"
    "if b[1] ~= 'building' and b[1] ~= 'waiting' then return 0 end\n"
    "if ARGV[2] ~= '' and b[2] ~= ARGV[2] then return 0 end\n"
    "redis.call('HSET', KEYS[1], 'state', ARGV[3], 'step', ARGV[4], 'reason', ARGV[5],\n"
    "  'image', ARGV[6], 'updated_at', ARGV[7], 'finished_at', ARGV[7])\n"
    "if redis.call('HGET', ARGV[1] .. b[3], 'building') == ARGV[8] then\n"
    "  redis.call('HDEL', ARGV[1] .. b[3], 'building') end\n"
    "redis.call('ZREM', ARGV[9], ARGV[8])\n"
    "return 1\n",
    ""};

int build_end(struct rconn *rc, const char *ws, const char *bid, const char *wid,
              enum build_state to, const char *step, const char *reason, const char *image)
{
    struct build_keys k = keys_of(ws, bid);
    const char *argv[10];
    int n;

    argv[0] = k.key;
    argv[1] = k.tpl;
    argv[2] = wid ? wid : "";
    argv[3] = build_state_name(to);
    argv[4] = step ? step : "";
    argv[5] = reason ? reason : "";
    argv[6] = image ? image : "";
    argv[7] = k.now;
    argv[8] = bid;
    argv[9] = k.active;
    n = record_eval_int(rc, &end_script, 1, 9, argv);
    /* Its push is over; a failure here only keeps a collection waiting
     * until the token's expiry (registry_gate.c). */
    if (n == 1)
        reply_done(rconn_cmd(rc, 0, "ZREM %s %s", K_REG_PUSHES, bid));
    return n;
}

/* Members that ended or went stale give their slot back first. */
static struct rscript slot_script = {
    "build_slot",
    "local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n"
    "for i = 1, #all, 2 do\n"
    "  local st = redis.call('HGET', ARGV[1] .. all[i], 'state')\n"
    "  if (st ~= 'waiting' and st ~= 'building') or tonumber(all[i + 1]) < tonumber(ARGV[4]) then\n"
    "    redis.call('ZREM', KEYS[1], all[i]) end\n"
    "end\n"
    "if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 1 end\n"
    "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end\n"
    "redis.call('ZADD', KEYS[1], ARGV[5], ARGV[2])\n"
    "return 1\n",
    ""};

int build_slot_take(struct rconn *rc, const char *ws, const char *bid, long max, long long stale_ms)
{
    struct build_keys k = keys_of(ws, bid);
    char prefix[160], maxs[24], since[24];
    const char *argv[6];

    snprintf(prefix, sizeof(prefix), K_BLD, ws, "");
    snprintf(maxs, sizeof(maxs), "%ld", max);
    snprintf(since, sizeof(since), "%lld", atoll(k.now) - stale_ms);
    argv[0] = k.active;
    argv[1] = prefix;
    argv[2] = bid;
    argv[3] = maxs;
    argv[4] = since;
    argv[5] = k.now;
    return record_eval_int(rc, &slot_script, 1, 5, argv);
}

int build_size_set(struct rconn *rc, const char *ws, const char *bid, long long bytes)
{
    char key[160];

    snprintf(key, sizeof(key), K_BLD, ws, bid);
    return reply_done(rconn_cmd(rc, 0, "HSET %s size %lld", key, bytes));
}

int build_tags_stash(struct rconn *rc, const char *ws, const char *bid, json_t *tags)
{
    char key[160], *text = json_dumps(tags, JSON_COMPACT);
    int rv;

    if (!text)
        return -1;
    snprintf(key, sizeof(key), K_BLD, ws, bid);
    rv = reply_done(rconn_cmd(rc, 0, "HSET %s tags %s", key, text));
    free(text);
    return rv;
}

int build_recipe_set(struct rconn *rc, const char *ws, const struct build_record *b)
{
    char key[160];

    snprintf(key, sizeof(key), K_BLD, ws, b->id);
    return reply_done(rconn_cmd(rc, 0,
                                "HSET %s root %s start_cmd %s ready_cmd %s user %s workdir %s "
                                "target %s tags %s",
                                key, b->root, b->start_cmd, b->ready_cmd, b->user, b->workdir,
                                b->target, b->tags));
}

static struct rscript log_script = {
    "build_log",
    "if redis.call('HGET', KEYS[1], 'state') ~= 'building' then return 0 end\n"
    "for i = 2, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end\n"
    "redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[1]) - 1)\n"
    "return 1\n",
    ""};

int build_log_append(struct rconn *rc, const char *ws, const char *bid, json_t *entries)
{
    size_t n = json_array_size(entries), i;
    const char **argv = calloc(n + 3, sizeof(*argv));
    char key[160], logs[160], max[16];
    json_t *e;
    int rv;

    if (!argv)
        return -1;
    snprintf(key, sizeof(key), K_BLD, ws, bid);
    snprintf(logs, sizeof(logs), K_BLD_LOGS, ws, bid);
    snprintf(max, sizeof(max), "%d", BUILD_LOGS_MAX);
    argv[0] = key;
    argv[1] = logs;
    argv[2] = max;
    json_array_foreach(entries, i, e)
    {
        argv[3 + i] = json_dumps(e, JSON_COMPACT);
    }
    rv = record_eval_int(rc, &log_script, 2, (int)n + 1, argv);
    for (i = 0; i < n; i++)
        free((char *)argv[3 + i]);
    free(argv);
    return rv < 0 ? -1 : 0;
}

json_t *build_log_range(struct rconn *rc, const char *ws, const char *bid, long offset, long limit)
{
    char logs[160];
    redisReply *r;
    json_t *out;

    snprintf(logs, sizeof(logs), K_BLD_LOGS, ws, bid);
    r = rconn_cmd(rc, 0, "LRANGE %s %ld %ld", logs, offset, offset + limit - 1);
    if (!r)
        return NULL;
    out = json_array();
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        json_t *e = r->element[i]->str ? json_loads(r->element[i]->str, 0, NULL) : NULL;
        if (e)
            json_array_append_new(out, e);
    }
    freeReplyObject(r);
    return out;
}

/* The build whose push this is, checked, then recorded unless a collection
 * holds pushes: one script, so a collection that saw no push in flight
 * never meets one. */
static struct rscript admit_script = {"push_admit",
                                      "if redis.call('EXISTS', KEYS[1]) == 1 then return -2 end\n"
                                      "redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])\n"
                                      "return 1\n",
                                      ""};

int build_push_admit(struct rconn *rc, const char *wid, const char *repo, long long expires)
{
    char ws[17], tpl[49], key[160], exp[24];
    struct build_record b;
    const char *argv[4] = {K_REG_GC, K_REG_PUSHES, NULL, exp};
    redisReply *r;
    int rv = 0;

    if (registry_repo_parse(repo, ws, tpl) != 0)
        return 0;
    snprintf(key, sizeof(key), K_TPL, ws, tpl);
    r = rconn_cmd(rc, 0, "HGET %s building", key);
    if (!r)
        return -1;
    if (reply_str(r) && build_read(rc, ws, reply_str(r), &b) == 1)
        rv = b.state == BUILD_STATE_BUILDING && strcmp(b.worker, wid) == 0;
    freeReplyObject(r);
    if (rv != 1)
        return rv;
    argv[2] = b.id;
    snprintf(exp, sizeof(exp), "%lld", expires);
    return record_eval_int(rc, &admit_script, 2, 2, argv);
}
