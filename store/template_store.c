/* template_store.c: a workspace's templates and their tags (docs/templates.md). */
#include "template_store.h"

#include "clock.h"
#include "id_list.h"
#include "keys.h"
#include "record_read.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int id_spelled(const char *id, const char *prefix)
{
    size_t p = strlen(prefix);

    if (!id || strncmp(id, prefix, p) != 0 || strlen(id) != p + 20)
        return 0;
    return strspn(id + p, "0123456789abcdef") == 20;
}

int template_id_ok(const char *id)
{
    return id_spelled(id, TEMPLATE_PREFIX);
}

int build_id_ok(const char *id)
{
    return id_spelled(id, BUILD_PREFIX);
}

#define TEXT RECORD_TEXT
#define NUM RECORD_NUM

static void fill(const redisReply *h, void *out)
{
    struct template_record *t = out;

    memset(t, 0, sizeof(*t));
    for (size_t i = 0; h && i + 1 < h->elements; i += 2) {
        const char *k = h->element[i]->str, *v = h->element[i + 1]->str;
        if (!k || !v)
            continue;
        TEXT("id", t->id)
        TEXT("name", t->name)
        TEXT("build", t->build)
        TEXT("image", t->image)
        TEXT("root", t->root)
        TEXT("building", t->building)
        TEXT("start_cmd", t->start_cmd)
        TEXT("ready_cmd", t->ready_cmd)
        TEXT("user", t->user)
        TEXT("workdir", t->workdir)
        NUM("cpu", t->cpu)
        NUM("memory_mb", t->memory_mb)
        NUM("build_count", t->build_count)
        NUM("created_at", t->created_at)
        NUM("updated_at", t->updated_at)
        NUM("public", t->public_)
    }
}
#undef TEXT
#undef NUM

static int read_id(struct rconn *rc, const char *ws, const char *id, void *item)
{
    char key[160];

    snprintf(key, sizeof(key), K_TPL, ws, id);
    return record_hash_read(rc, key, fill, item);
}

int template_find(struct rconn *rc, const char *ws, const char *ref, struct template_record *out)
{
    char key[128];
    redisReply *r;
    int rv;

    memset(out, 0, sizeof(*out));
    if (template_id_ok(ref))
        return read_id(rc, ws, ref, out);
    snprintf(key, sizeof(key), K_TPL_NAMES, ws);
    r = rconn_cmd(rc, 0, "HGET %s %s", key, ref);
    if (!r)
        return -1;
    rv = reply_str(r) ? read_id(rc, ws, reply_str(r), out) : 0;
    freeReplyObject(r);
    return rv;
}

/* The name is taken and the record written in one step, so two builds of
 * one new name in a workspace make one template. */
static struct rscript make_script = {
    "template_make",
    "local id = redis.call('HGET', KEYS[1], ARGV[1])\n"
    "if id then return {0, id} end\n"
    "if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return {-1, ''} end\n"
    "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])\n"
    "redis.call('HSET', KEYS[2], 'id', ARGV[2], 'name', ARGV[1], 'cpu', ARGV[3],\n"
    "  'memory_mb', ARGV[4], 'created_at', ARGV[5], 'updated_at', ARGV[5], 'public', '0',\n"
    "  'build_count', '0')\n"
    "redis.call('ZADD', KEYS[3], ARGV[5], ARGV[2])\n"
    "return {1, ARGV[2]}\n",
    ""};

int template_get_or_make(struct rconn *rc, const char *ws, const char *name, long cpu,
                         long memory_mb, long max, struct template_record *out)
{
    char names[128], one[160], all[128], id[TEMPLATE_ID_MAX] = TEMPLATE_PREFIX;
    char c[24], m[24], now[24], cap[24];
    const char *argv[9] = {names, one, all, name, id, c, m, now, cap};
    redisReply *r;
    int made;

    if (secret_random_hex(id + strlen(TEMPLATE_PREFIX), 10) != 0)
        return -1;
    snprintf(names, sizeof(names), K_TPL_NAMES, ws);
    snprintf(one, sizeof(one), K_TPL, ws, id);
    snprintf(all, sizeof(all), K_TPLS, ws);
    snprintf(c, sizeof(c), "%ld", cpu);
    snprintf(m, sizeof(m), "%ld", memory_mb);
    snprintf(now, sizeof(now), "%lld", (long long)clock_now_ms());
    snprintf(cap, sizeof(cap), "%ld", max);
    r = rconn_eval(rc, &make_script, 3, 6, argv);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !reply_str(r->element[1])) {
        if (r)
            freeReplyObject(r);
        return -1;
    }
    made = (int)reply_int(r->element[0], 0);
    snprintf(id, sizeof(id), "%s", reply_str(r->element[1]));
    freeReplyObject(r);
    if (made < 0)
        return -2;
    return read_id(rc, ws, id, out) == 1 ? made : -1;
}

int template_list(struct rconn *rc, const char *ws, struct template_record **out, size_t *n)
{
    char all[128];
    void *items;
    int rv;

    snprintf(all, sizeof(all), K_TPLS, ws);
    rv = id_list_read_all(rc, ws, rconn_cmd(rc, 0, "ZRANGE %s 0 999", all), sizeof(**out), read_id,
                          &items, n);
    *out = items;
    return rv;
}

/* Every key of the template goes at once; its builds' records with it. */
static struct rscript remove_script = {
    "template_remove",
    "local name = redis.call('HGET', KEYS[1], 'name')\n"
    "if not name then return 0 end\n"
    "redis.call('HDEL', KEYS[2], name)\n"
    "redis.call('ZREM', KEYS[3], ARGV[1])\n"
    "for _, b in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do\n"
    "  redis.call('DEL', ARGV[2] .. b, ARGV[3] .. b)\n"
    "end\n"
    "redis.call('DEL', KEYS[1], KEYS[4], KEYS[5])\n"
    "return 1\n",
    ""};

/* The builds' global index entries (another slot than the workspace's), once
 * their records are gone; one left behind only names a missing build. */
static void forget_builds(struct rconn *rc, const struct id_list *bids)
{
    char index[96];

    for (size_t i = 0; i < bids->n; i++) {
        snprintf(index, sizeof(index), K_BLD_INDEX, bids->id[i]);
        reply_done(rconn_cmd(rc, 0, "DEL %s", index));
    }
}

int template_remove(struct rconn *rc, const char *ws, const char *id)
{
    char one[160], names[128], all[128], tags[160], builds[160], bld[128], logs[128];
    const char *argv[8] = {one, names, all, tags, builds, id, bld, logs};
    struct id_list bids;
    int n;

    snprintf(one, sizeof(one), K_TPL, ws, id);
    snprintf(names, sizeof(names), K_TPL_NAMES, ws);
    snprintf(all, sizeof(all), K_TPLS, ws);
    snprintf(tags, sizeof(tags), K_TPL_TAGS, ws, id);
    snprintf(builds, sizeof(builds), K_TPL_BUILDS, ws, id);
    snprintf(bld, sizeof(bld), K_BLD, ws, "");
    snprintf(logs, sizeof(logs), K_BLD_LOGS, ws, "");
    if (id_list_from_reply(rconn_cmd(rc, 0, "ZRANGE %s 0 -1", builds), &bids) != 0)
        return -1;
    n = record_eval_int(rc, &remove_script, 5, 3, argv);
    if (n == 1)
        forget_builds(rc, &bids);
    id_list_free(&bids);
    return n;
}

int template_set_public(struct rconn *rc, const char *ws, const char *id, int public_)
{
    char one[160];

    snprintf(one, sizeof(one), K_TPL, ws, id);
    return reply_done(rconn_cmd(rc, 0, "HSET %s public %d updated_at %lld", one, public_ != 0,
                                (long long)clock_now_ms()));
}

int template_built(struct rconn *rc, const char *ws, const struct template_record *t)
{
    char one[160];

    snprintf(one, sizeof(one), K_TPL, ws, t->id);
    if (reply_done(rconn_cmd(rc, 0, "HINCRBY %s build_count 1", one)) != 0)
        return -1;
    return reply_done(rconn_cmd(rc, 0,
                                "HSET %s build %s image %s root %s start_cmd %s ready_cmd %s "
                                "user %s workdir %s updated_at %lld",
                                one, t->build, t->image, t->root, t->start_cmd, t->ready_cmd,
                                t->user, t->workdir, (long long)clock_now_ms()));
}

int template_tag_set(struct rconn *rc, const char *ws, const char *id, const char *tag,
                     const char *bid)
{
    char key[160];

    snprintf(key, sizeof(key), K_TPL_TAGS, ws, id);
    return reply_done(
        rconn_cmd(rc, 0, "HSET %s %s %s:%lld", key, tag, bid, (long long)clock_now_ms()));
}

int template_tag_get(struct rconn *rc, const char *ws, const char *id, const char *tag,
                     char bid[TEMPLATE_ID_MAX])
{
    char key[160];
    redisReply *r;
    int found;

    snprintf(key, sizeof(key), K_TPL_TAGS, ws, id);
    r = rconn_cmd(rc, 0, "HGET %s %s", key, tag);
    if (!r)
        return -1;
    found = reply_str(r) != NULL;
    if (found)
        snprintf(bid, TEMPLATE_ID_MAX, "%.*s", (int)strcspn(reply_str(r), ":"), reply_str(r));
    freeReplyObject(r);
    return found;
}

int template_tag_remove(struct rconn *rc, const char *ws, const char *id, const char *tag)
{
    char key[160];
    redisReply *r;
    int n;

    snprintf(key, sizeof(key), K_TPL_TAGS, ws, id);
    r = rconn_cmd(rc, 0, "HDEL %s %s", key, tag);
    if (!r)
        return -1;
    n = (int)reply_int(r, 0);
    freeReplyObject(r);
    return n;
}

json_t *template_tags(struct rconn *rc, const char *ws, const char *id)
{
    char key[160];
    redisReply *r;
    json_t *out;

    snprintf(key, sizeof(key), K_TPL_TAGS, ws, id);
    r = rconn_cmd(rc, 0, "HGETALL %s", key);
    if (!r)
        return NULL;
    out = json_array();
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
        const char *tag = r->element[i]->str, *v = r->element[i + 1]->str, *c;
        if (!tag || !v || !(c = strchr(v, ':')))
            continue;
        json_array_append_new(out,
                              json_pack("{s:s, s:s%, s:I}", "tag", tag, "buildID", v,
                                        (size_t)(c - v), "createdAt", (json_int_t)atoll(c + 1)));
    }
    freeReplyObject(r);
    return out;
}
