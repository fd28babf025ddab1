#include "wake.h"

#include <stdio.h>

int wake_push(struct rconn *rc, const char *key, const char *msg, int ttl_ms)
{
    redisReply *r = rconn_cmd(rc, 0, "LPUSH %s %s", key, msg);

    if (!r)
        return -1;
    freeReplyObject(r);
    r = rconn_cmd(rc, 0, "PEXPIRE %s %d", key, ttl_ms);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

int wake_wait(struct rconn *rc, const char *key, int block_ms, char *msg, size_t msglen)
{
    redisReply *r = rconn_cmd(rc, block_ms, "BLPOP %s %.3f", key, (double)block_ms / 1000.0);
    int woken;

    if (!r)
        return -1;
    woken = r->type == REDIS_REPLY_ARRAY && r->elements == 2 && reply_str(r->element[1]);
    if (woken && msg)
        snprintf(msg, msglen, "%s", reply_str(r->element[1]));
    freeReplyObject(r);
    return woken;
}
