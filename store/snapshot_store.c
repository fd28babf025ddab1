#include "snapshot_store.h"

#include "clock.h"
#include "id_list.h"
#include "keys.h"
#include "record_read.h"
#include "sandbox_codec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_words[SNAPSHOT_STATE_COUNT] = {
    [SNAPSHOT_STATE_UNKNOWN] = "",
    [SNAPSHOT_STATE_PENDING] = "pending",
    [SNAPSHOT_STATE_READY] = "ready",
    [SNAPSHOT_STATE_FAILED] = "failed",
};

const char *snapshot_state_name(enum snapshot_state s)
{
    return (unsigned)s < SNAPSHOT_STATE_COUNT ? state_words[s] : "";
}

enum snapshot_state snapshot_state_parse(const char *word)
{
    int i = codec_word_index(state_words, SNAPSHOT_STATE_COUNT, word);

    return i < 0 ? SNAPSHOT_STATE_UNKNOWN : (enum snapshot_state)i;
}

int snapshot_id_ok(const char *id)
{
    size_t n = strlen(SNAPSHOT_PREFIX);

    if (!id || strncmp(id, SNAPSHOT_PREFIX, n) != 0 || strlen(id) != n + 20)
        return 0;
    for (id += n; *id; id++)
        if (!isdigit((unsigned char)*id) && !(*id >= 'a' && *id <= 'f'))
            return 0;
    return 1;
}

int snapshot_image_is(const char *image)
{
    return image && strncmp(image, SNAPSHOT_IMAGE_REPO ":", strlen(SNAPSHOT_IMAGE_REPO) + 1) == 0;
}

void snapshot_image(const char *id, char *out, size_t len)
{
    snprintf(out, len, SNAPSHOT_IMAGE_REPO ":%s", id);
}

/* Only the worker that holds it may say how it went, and only once. */
static struct rscript report_script = {
    "snapshot_report",
    "local s = redis.call('HMGET', KEYS[1], 'state', 'worker')\n"
    "if s[1] ~= 'pending' or s[2] ~= ARGV[1] then return 0 end\n"
    "redis.call('HSET', KEYS[1], 'state', ARGV[2], 'reason', ARGV[3])\n"
    "return 1\n",
    ""};

static struct rscript remove_script = {"snapshot_remove",
                                       "local h = redis.call('HGETALL', KEYS[1])\n"
                                       "if #h == 0 then return false end\n"
                                       "redis.call('DEL', KEYS[1])\n"
                                       "redis.call('ZREM', KEYS[2], ARGV[1])\n"
                                       "return h\n",
                                       ""};

static void keys_of(const char *ws, const char *id, char *one, size_t onelen, char *all,
                    size_t alllen)
{
    snprintf(one, onelen, K_SNAPSHOT, ws, id);
    snprintf(all, alllen, K_SNAPSHOTS, ws);
}

int snapshot_insert(struct rconn *rc, const char *ws, const struct snapshot_record *s)
{
    char one[192], all[128];
    redisReply *r;

    keys_of(ws, s->id, one, sizeof(one), all, sizeof(all));
    r = rconn_cmd(rc, 0,
                  "HSET %s id %s sandbox %s template %s pool %s worker %s image %s state pending "
                  "name %s created_at %lld fork %d",
                  one, s->id, s->sandbox, s->template_id, s->pool, s->worker, s->image, s->name,
                  s->created_at, s->fork);
    if (!r)
        return -1;
    freeReplyObject(r);
    r = rconn_cmd(rc, 0, "ZADD %s %lld %s", all, s->created_at, s->id);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

/* One HGETALL-shaped reply into out. */
static void fill(const redisReply *h, struct snapshot_record *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; h && i + 1 < h->elements; i += 2) {
        const char *k = h->element[i]->str,
                   *v = h->element[i + 1]->str ? h->element[i + 1]->str : "";
        if (!k)
            continue;
#define TEXT(field, dst)                                                                           \
    if (strcmp(k, field) == 0)                                                                     \
        snprintf(dst, sizeof(dst), "%s", v);
        TEXT("id", out->id)
        TEXT("sandbox", out->sandbox)
        TEXT("template", out->template_id)
        TEXT("pool", out->pool)
        TEXT("worker", out->worker)
        TEXT("image", out->image)
        TEXT("state", out->state_text)
        TEXT("name", out->name)
        TEXT("reason", out->reason)
#undef TEXT
        if (strcmp(k, "created_at") == 0)
            out->created_at = atoll(v);
        if (strcmp(k, "fork") == 0)
            out->fork = atoi(v);
    }
    out->state = snapshot_state_parse(out->state_text);
}

/* fill through record_read's shape. */
static void fill_any(const redisReply *h, void *out)
{
    fill(h, out);
}

static int filled(redisReply *r, struct snapshot_record *out)
{
    return record_from_reply(r, fill_any, out);
}

int snapshot_read(struct rconn *rc, const char *ws, const char *id, struct snapshot_record *out)
{
    char one[192];

    snprintf(one, sizeof(one), K_SNAPSHOT, ws, id);
    return filled(rconn_cmd(rc, 0, "HGETALL %s", one), out);
}

int snapshot_report(struct rconn *rc, const char *ws, const char *id, const char *wid,
                    enum snapshot_state state, const char *reason)
{
    char one[192];
    const char *argv[4] = {one, wid, snapshot_state_name(state), reason ? reason : ""};
    redisReply *r;
    int n;

    snprintf(one, sizeof(one), K_SNAPSHOT, ws, id);
    r = rconn_eval(rc, &report_script, 1, 3, argv);
    if (!r)
        return -1;
    n = (int)reply_int(r, 0);
    freeReplyObject(r);
    return n;
}

int snapshot_remove(struct rconn *rc, const char *ws, const char *id, struct snapshot_record *out)
{
    char one[192], all[128];
    const char *argv[3] = {one, all, id};

    keys_of(ws, id, one, sizeof(one), all, sizeof(all));
    return filled(rconn_eval(rc, &remove_script, 2, 1, argv), out);
}

static int read_one(struct rconn *rc, const char *ws, const char *id, void *item)
{
    return snapshot_read(rc, ws, id, item);
}

int snapshot_list(struct rconn *rc, const char *ws, struct snapshot_record **out, size_t *n)
{
    char all[128];
    void *items;
    int rv;

    snprintf(all, sizeof(all), K_SNAPSHOTS, ws);
    rv = id_list_read_all(rc, ws, rconn_cmd(rc, 0, "ZRANGE %s 0 999", all), sizeof(**out), read_one,
                          &items, n);
    *out = items;
    return rv;
}
