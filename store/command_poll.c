#include "command_poll.h"

#include "clock.h"
#include "keys.h"
#include "worker_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void stream_key(char *out, size_t len, const char *pool, const char *wid)
{
    snprintf(out, len, K_WORKER_CMDS, pool, wid);
}

void command_batch_free(struct command_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->v[i].sandbox);
        free(b->v[i].args);
    }
    free(b->v);
    memset(b, 0, sizeof(*b));
}

int command_ack(struct rconn *rc, const char *pool, const char *wid, const char *id)
{
    char stream[192];
    redisReply *r;

    stream_key(stream, sizeof(stream), pool, wid);
    r = rconn_cmd(rc, 0, "XACK %s " CMD_GROUP " %s", stream, id);
    if (!r)
        return -1;
    freeReplyObject(r);
    r = rconn_cmd(rc, 0, "XDEL %s %s", stream, id);
    if (r)
        freeReplyObject(r);
    return 0;
}

/* One entry [id, [field, value, ...]] as a command; 0 when it is none (deleted
 * while pending, or without a type). */
static int read_entry(const redisReply *e, struct command *c)
{
    const char *type, *v;

    memset(c, 0, sizeof(*c));
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[1]->type != REDIS_REPLY_ARRAY || !(type = reply_hget(e->element[1], "type")) ||
        strlen(type) >= sizeof(c->type) || strlen(e->element[0]->str) >= sizeof(c->id))
        return 0;
    snprintf(c->id, sizeof(c->id), "%s", e->element[0]->str);
    snprintf(c->type, sizeof(c->type), "%s", type);
    if ((v = reply_hget(e->element[1], "sandbox")) && !(c->sandbox = strdup(v)))
        return 0;
    if ((v = reply_hget(e->element[1], "sandbox_id")))
        snprintf(c->sandbox_id, sizeof(c->sandbox_id), "%s", v);
    if ((v = reply_hget(e->element[1], "args")) && !(c->args = strdup(v))) {
        free(c->sandbox);
        return 0;
    }
    return 1;
}

/* Appends stream entries [[id, [field, value, ...]], ...]. */
static int append_entries(const redisReply *entries, struct command_batch *out)
{
    for (size_t i = 0; entries && entries->type == REDIS_REPLY_ARRAY && i < entries->elements;
         i++) {
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 16;
            struct command *v = realloc(out->v, cap * sizeof(*v));
            if (!v)
                return -1;
            out->v = v;
            out->cap = cap;
        }
        out->n += read_entry(entries->element[i], &out->v[out->n]);
    }
    return 0;
}

/* XREADGROUP without blocking (blocking waits go through command_wait); it
 * answers [[stream, entries]] or nil. */
int command_read(struct rconn *rc, const char *pool, const char *wid, const char *from,
                 struct command_batch *out)
{
    char stream[192];
    redisReply *r;
    int rv = 0;

    stream_key(stream, sizeof(stream), pool, wid);
    r = rconn_cmd(rc, 0, "XREADGROUP GROUP " CMD_GROUP " " CMD_CONSUMER " COUNT 100 STREAMS %s %s",
                  stream, from);
    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->elements == 2)
        rv = append_entries(r->element[0]->element[1], out);
    freeReplyObject(r);
    return rv;
}

int command_reclaim(struct rconn *rc, const char *pool, const char *wid, int idle_ms,
                    struct command_batch *out)
{
    char stream[192];
    redisReply *r;
    int rv = 0;

    stream_key(stream, sizeof(stream), pool, wid);
    r = rconn_cmd(rc, 0, "XAUTOCLAIM %s " CMD_GROUP " " CMD_CONSUMER " %d 0-0 COUNT 100", stream,
                  idle_ms);
    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2)
        rv = append_entries(r->element[1], out);
    freeReplyObject(r);
    return rv;
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
static int take_if_current(struct rconn *rc, const char *wkey, const char *stream, const char *seq,
                           struct command_batch *out, char *last, size_t lastlen)
{
    const char *argv[3] = {wkey, stream, seq};
    redisReply *r = rconn_eval(rc, &take_script, 2, 1, argv);
    int rv = -1;

    if (r && r->type == REDIS_REPLY_ARRAY && r->elements >= 1) {
        rv = r->element[0]->integer != 0;
        if (r->element[0]->integer == 1 && r->elements == 2 && append_entries(r->element[1], out))
            rv = -1;
        else if (r->element[0]->integer == 0 && r->elements == 2 && r->element[1]->str)
            snprintf(last, lastlen, "%s", r->element[1]->str);
    }
    if (r)
        freeReplyObject(r);
    return rv;
}

int command_wait(struct rconn *rc, const char *pool, const char *wid, long long wait_ms,
                 struct command_batch *out)
{
    char wkey[160], stream[192], seq[32], last[48];
    long long ticket = worker_poll_ticket(rc, pool, wid), deadline = clock_now_ms() + wait_ms;
    redisReply *r;
    int rv;

    if (ticket < 0)
        return -1;
    worker_key(wkey, sizeof(wkey), pool, wid);
    stream_key(stream, sizeof(stream), pool, wid);
    snprintf(seq, sizeof(seq), "%lld", ticket);
    for (;;) {
        long long left = deadline - clock_now_ms();
        if ((rv = take_if_current(rc, wkey, stream, seq, out, last, sizeof(last))) != 0)
            return rv < 0 ? -1 : 0;
        if (left <= 0)
            return 0;
        r = rconn_cmd(rc, (int)left, "XREAD COUNT 1 BLOCK %lld STREAMS %s %s", left, stream, last);
        if (!r)
            return -1;
        freeReplyObject(r);
    }
}
