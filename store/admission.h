/* admission.h: the workspace's concurrent sandbox limit, checked and reserved
 * atomically across every handler process by one Lua script. */
#ifndef CORRAL_ADMISSION_H
#define CORRAL_ADMISSION_H

#include "rconn.h"

#include <stdint.h>

/* The admission check as a Lua function, for every script that admits: a
 * create's reservation (admission.c) and a resume (sandbox_pause.c). Drops
 * lapsed reservations, then reserves sbid until deadline if the workspace's
 * limit (capped by ceil) allows; returns {1 or 0, limit}. */
#define ADMIT_LUA                                                                                  \
    "local function admit(active, info, sbid, now, deadline, dflt, ceil)\n"                        \
    "  redis.call('ZREMRANGEBYSCORE', active, '-inf', '(' .. now)\n"                               \
    "  local limit = tonumber(redis.call('HGET', info, 'max_concurrent') or dflt)\n"               \
    "  limit = math.min(limit, tonumber(ceil))\n"                                                  \
    "  if redis.call('ZSCORE', active, sbid) then return {1, limit} end\n"                         \
    "  if redis.call('ZCARD', active) >= limit then return {0, limit} end\n"                       \
    "  redis.call('ZADD', active, deadline, sbid)\n"                                               \
    "  return {1, limit}\n"                                                                        \
    "end\n"

/* 1 admitted, 0 over the limit (*limit set: the workspace's, capped by ceiling),
 * -1 Redis failed. The reservation lapses by itself at deadline_ms unless
 * admission_activate() makes it last. */
int admission_reserve(struct rconn *rc, const char *ws, const char *sbid, int64_t deadline_ms,
                      long ceiling, long *limit);
int admission_release(struct rconn *rc, const char *ws, const char *sbid);
/* Count of live reservations and running sandboxes. */
long admission_count(struct rconn *rc, const char *ws);

#endif
