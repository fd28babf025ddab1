/* registry_gate.c: a garbage collection's hold on the registry's pushes
 * (decision 0081). One script takes the hold and counts the pushes in flight,
 * as build_push_admit's records or refuses them in one, so no push slips
 * between the count and the collection. */
#include "registry_gate.h"

#include "keys.h"
#include "record_read.h"

#include <stdio.h>

/* Pushes whose tokens expired, or whose builds ended, are not in flight. */
static struct rscript hold_script = {"registry_gc_hold",
                                     "redis.call('SET', KEYS[1], '1', 'EX', tonumber(ARGV[1]))\n"
                                     "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])\n"
                                     "return redis.call('ZCARD', KEYS[2])\n",
                                     ""};

int registry_gc_hold(struct rconn *rc, long ttl_s, long long now_s)
{
    char ttl[24], now[24];
    const char *argv[4] = {K_REG_GC, K_REG_PUSHES, ttl, now};

    snprintf(ttl, sizeof(ttl), "%ld", ttl_s);
    snprintf(now, sizeof(now), "%lld", now_s);
    return record_eval_int(rc, &hold_script, 2, 2, argv);
}

int registry_gc_release(struct rconn *rc)
{
    return reply_done(rconn_cmd(rc, 0, "DEL %s", K_REG_GC));
}
