/* sandbox_wait.c: the Redis side of a create that waits for its sandbox
 * (handlers/create_wait.c): the Idempotency-Key, the waiting handler's lease,
 * and the wake a worker's report sends. Decision 0027. */
#include "sandbox_store.h"

#include "clock.h"
#include "keys.h"
#include "wake.h"

#include <stdio.h>
#include <string.h>

int sandbox_idem_claim(struct rconn *rc, const char *ws, const char *mac, int claim_ms,
                       char sbid[33], char print[65])
{
    char key[200];
    redisReply *r;

    snprintf(key, sizeof(key), K_IDEM, ws, mac);
    r = rconn_cmd(rc, 0, "SET %s claim NX PX %d", key, claim_ms);
    if (r && r->type == REDIS_REPLY_STATUS)
        return reply_done(r) == 0 ? 1 : -1;
    reply_done(r);
    r = rconn_cmd(rc, 0, "GET %s", key);
    if (!r)
        return -1;
    sbid[0] = print[0] = '\0';
    /* "claim" (its create is being placed) or gone: neither parses. */
    if (!reply_str(r) || sscanf(reply_str(r), "%32[0-9a-f]:%64s", sbid, print) != 2)
        sbid[0] = print[0] = '\0';
    freeReplyObject(r);
    return 0;
}

int sandbox_idem_record(struct rconn *rc, const char *ws, const char *mac, const char *sbid,
                        const char *print, long long ttl_ms)
{
    char key[200];

    snprintf(key, sizeof(key), K_IDEM, ws, mac);
    return reply_done(rconn_cmd(rc, 0, "SET %s %s:%s PX %lld", key, sbid, print, ttl_ms));
}

void sandbox_idem_forget(struct rconn *rc, const char *ws, const char *mac)
{
    char key[200];

    snprintf(key, sizeof(key), K_IDEM, ws, mac);
    reply_done(rconn_cmd(rc, 0, "DEL %s", key));
}

int sandbox_wait_hold(struct rconn *rc, const char *ws, const char *sbid, long long until_ms)
{
    char key[128];

    snprintf(key, sizeof(key), K_WAITERS, ws);
    return reply_done(rconn_cmd(rc, 0, "ZADD %s %lld %s", key, until_ms, sbid));
}

void sandbox_wait_release(struct rconn *rc, const char *ws, const char *sbid)
{
    char key[128];

    snprintf(key, sizeof(key), K_WAITERS, ws);
    reply_done(rconn_cmd(rc, 0, "ZREM %s %s", key, sbid));
}

int sandbox_wait_wake(struct rconn *rc, const char *ws, const char *sbid, int block_ms, char *msg,
                      size_t msglen)
{
    char key[160];

    snprintf(key, sizeof(key), K_READY, ws, sbid);
    return wake_wait(rc, key, block_ms, msg, msglen);
}

int sandbox_wait_take(struct rconn *rc, const char *ws, const char *sbid)
{
    char key[128];
    redisReply *r;
    int taken;

    snprintf(key, sizeof(key), K_WAITERS, ws);
    r = rconn_cmd(rc, 0, "ZREM %s %s", key, sbid);
    if (!r)
        return -1;
    taken = (int)reply_int(r, 0) == 1;
    freeReplyObject(r);
    return taken;
}

/* Each deadline's zset: the score is when it passes (ms). */
static const char *const deadline_keys[] = {
    [SANDBOX_DUE_CREATE] = K_PENDING,
    [SANDBOX_DUE_WAITER] = K_WAITERS,
    [SANDBOX_DUE_TIMEOUT] = K_TIMEOUTS,
};

int sandbox_due(struct rconn *rc, const char *ws, enum sandbox_due which, struct id_list *out)
{
    char key[128];

    snprintf(key, sizeof(key), deadline_keys[which], ws);
    return id_list_from_reply(
        rconn_cmd(rc, 0, "ZRANGEBYSCORE %s -inf %lld LIMIT 0 100", key, (long long)clock_now_ms()),
        out);
}
