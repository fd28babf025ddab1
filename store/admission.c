#include "admission.h"

#include "accounts.h"
#include "clock.h"
#include "keys.h"

#include <stdio.h>

/* The admission gate. A reservation is a member of the workspace's "active"
 * zset whose score is the time it lapses; a running sandbox has score +inf.
 * Lapsed reservations (a handler killed mid-create, a create no worker took) are
 * dropped here, before counting, so no leak outlives its deadline. Check and add
 * happen in one script: two handlers can never both take the last place.
 * The operator's ceiling caps the workspace's own limit, so lowering it also
 * binds a workspace whose owner set a higher limit before. */
static struct rscript reserve_script = {
    "admission_reserve",
    ADMIT_LUA "return admit(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])\n", ""};

int admission_reserve(struct rconn *rc, const char *ws, const char *sbid, int64_t deadline_ms,
                      long ceiling, long *limit)
{
    char active[128], info[128], now[24], deadline[24], dflt[24], ceil[24];
    const char *argv[7] = {active, info, sbid, now, deadline, dflt, ceil};
    redisReply *r;
    int ok;

    snprintf(active, sizeof(active), K_ACTIVE, ws);
    snprintf(info, sizeof(info), K_WS_INFO, ws);
    snprintf(now, sizeof(now), "%lld", (long long)clock_now_ms());
    snprintf(deadline, sizeof(deadline), "%lld", (long long)deadline_ms);
    snprintf(dflt, sizeof(dflt), "%ld", ws_limit_defs[WS_LIMIT_MAX_CONCURRENT].dflt);
    snprintf(ceil, sizeof(ceil), "%ld", ceiling);
    r = rconn_eval(rc, &reserve_script, 2, 5, argv);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        if (r)
            freeReplyObject(r);
        return -1;
    }
    ok = (int)r->element[0]->integer;
    *limit = (long)r->element[1]->integer;
    freeReplyObject(r);
    return ok;
}

int admission_release(struct rconn *rc, const char *ws, const char *sbid)
{
    char active[128];
    redisReply *r;

    snprintf(active, sizeof(active), K_ACTIVE, ws);
    r = rconn_cmd(rc, 0, "ZREM %s %s", active, sbid);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

long admission_count(struct rconn *rc, const char *ws)
{
    char active[128];
    redisReply *r;
    long n;

    snprintf(active, sizeof(active), K_ACTIVE, ws);
    r = rconn_cmd(rc, 0, "ZCOUNT %s %lld +inf", active, (long long)clock_now_ms());
    if (!r)
        return -1;
    n = (long)reply_int(r, -1);
    freeReplyObject(r);
    return n;
}
