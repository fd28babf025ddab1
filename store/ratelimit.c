#include "ratelimit.h"

#include "keys.h"

#include <stdio.h>

/* GCRA, the token bucket as one number: KEYS[1] holds the time (us, Redis's
 * own clock, so that every process and host agrees) at which the bucket will
 * be full again. A request moves it one step (1/rate s) on; it is refused when
 * that would put it more than burst steps ahead of now. The key expires when
 * the bucket is full, so idle credentials leave nothing behind. One round trip;
 * a refused request changes nothing. Answers 0 (taken) or the ms to wait.
 * string.format('%d'): tostring would print the 16-digit time as 1.7e+15. */
static struct rscript take_script = {
    "ratelimit_take",
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
    "local step, window = tonumber(ARGV[1]), tonumber(ARGV[1]) * tonumber(ARGV[2])\n"
    "local tat = tonumber(redis.call('GET', KEYS[1]) or now)\n"
    "if tat < now then tat = now end\n"
    "local next = tat + step\n"
    "if next - now > window then return math.ceil((next - now - window) / 1000) end\n"
    "redis.call('SET', KEYS[1], string.format('%d', next), 'PX', math.ceil((next - now) / 1000) + "
    "1)\n"
    "return 0\n",
    ""};

int ratelimit_take(struct rconn *rc, const struct token *cred, long rate, long burst,
                   long *retry_ms)
{
    char key[160], step[24], cap[24];
    const char *argv[3] = {key, step, cap};
    redisReply *r;
    long long wait;

    snprintf(key, sizeof(key), K_RATE, cred->ws,
             cred->kind == TOKEN_JOIN     ? "jn"
             : cred->kind == TOKEN_VOLUME ? "vt"
                                          : "ck",
             cred->id);
    snprintf(step, sizeof(step), "%ld", rate > 0 ? 1000000 / rate : 1000000);
    snprintf(cap, sizeof(cap), "%ld", burst);
    r = rconn_eval_unwaited(rc, &take_script, 1, 2, argv);
    if (!r || r->type != REDIS_REPLY_INTEGER) {
        if (r)
            freeReplyObject(r);
        return -1;
    }
    wait = r->integer;
    freeReplyObject(r);
    if (wait <= 0)
        return 1;
    *retry_ms = (long)wait;
    return 0;
}
