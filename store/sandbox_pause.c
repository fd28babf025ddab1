/* sandbox_pause.c: the record's pause, resume and timeout transitions, each
 * one script (decision 0044). A pausing sandbox gives its admission place
 * back at once and takes a new deadline: paused_max after which it is killed.
 * A resume takes a place again (the same admission check as a create) before
 * it asks the worker. Both clear the wake list, so the waiter hears only the
 * answer to its own command. */
#include "sandbox_store.h"

#include "accounts.h"
#include "admission.h"
#include "clock.h"
#include "keys.h"

#include <stdio.h>
#include <string.h>

/* running -> pausing, keeping the memory (memory '1': frozen) or only the
 * files ('0': stopped, decision 0074), recorded as paused_memory. Returns
 * {outcome, worker, pool, 0, memory}; outcome "ok" or the state that refused
 * it ("absent" when there is no record). */
#define PAUSE_LUA                                                                                  \
    "local function pause(sb, active, timeouts, ready, sbid, now, hold_until, memory)\n"           \
    "  local s = redis.call('HMGET', sb, 'state', 'worker', 'pool')\n"                             \
    "  if not s[1] then return {'absent', '', ''} end\n"                                           \
    "  if s[1] ~= 'running' then return {s[1], '', ''} end\n"                                      \
    "  redis.call('HSET', sb, 'state', 'pausing', 'paused_at', now, 'paused_memory', memory)\n"    \
    "  redis.call('ZREM', active, sbid)\n"                                                         \
    "  redis.call('ZADD', timeouts, hold_until, sbid)\n"                                           \
    "  redis.call('DEL', ready)\n"                                                                 \
    "  return {'ok', s[2] or '', s[3] or '', 0, tonumber(memory)}\n"                               \
    "end\n"

static struct rscript pause_script = {
    "sandbox_mark_pausing",
    PAUSE_LUA
    "return pause(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[4])\n",
    ""};

/* paused -> resuming, if admission allows. ARGV[6]: the new timeout in
 * seconds, or "" to keep the record's; ARGV[7]: '1' for a fresh start even of
 * a sandbox paused with its memory (E2B's onResume "reboot").
 * The policy recorded by PUT .../network (egress_next, "null" for none)
 * becomes the sandbox's in the same step and goes to the worker, unless it is
 * the one in force (decision 0074). A resume that keeps the memory keeps the
 * network its processes hold, so one adding or removing the proxy is refused
 * ("network", with "add" or "remove"), before it takes a place.
 * Returns {outcome, worker, pool, limit, policy to apply or '', fresh}. */
static struct rscript resume_script = {
    "sandbox_mark_resuming",
    ADMIT_LUA "local s = redis.call('HMGET', KEYS[1], 'state', 'worker', 'pool', "
              "'paused_memory', 'egress', 'egress_next')\n"
              "if not s[1] then return {'absent', '', '', 0} end\n"
              "if s[1] ~= 'paused' then return {s[1], '', '', 0} end\n"
              "local fresh = s[4] == '0' or ARGV[7] == '1'\n"
              "local cur, nxt = s[5] or '', s[6]\n"
              "if nxt == cur or (nxt == 'null' and cur == '') then nxt = nil end\n"
              "if nxt and not fresh and (cur == '') ~= (nxt == 'null') then\n"
              "  return {'network', '', '', 0, cur == '' and 'add' or 'remove', 0}\n"
              "end\n"
              "local a = admit(KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])\n"
              "if a[1] == 0 then return {'over_limit', '', '', a[2]} end\n"
              "redis.call('HSET', KEYS[1], 'state', 'resuming')\n"
              "if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'timeout', ARGV[6]) end\n"
              "if nxt then\n"
              "  redis.call('HSET', KEYS[1], 'egress', nxt == 'null' and '' or nxt,\n"
              "    'egress_policy', nxt == 'null' and '0' or '1')\n"
              "end\n"
              "redis.call('HDEL', KEYS[1], 'egress_next')\n"
              "redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])\n"
              "redis.call('DEL', KEYS[5])\n"
              "return {'ok', s[2] or '', s[3] or '', a[2], nxt or '', fresh and 1 or 0}\n",
    ""};

/* A deadline, claimed: only while it is still due (another corral-sched may
 * have acted on it already). A running sandbox created to pause on timeout is
 * paused; anything else is to be killed. */
static struct rscript timeout_script = {
    "sandbox_timeout_claim",
    PAUSE_LUA "local due = redis.call('ZSCORE', KEYS[3], ARGV[1])\n"
              "if not due or tonumber(due) > tonumber(ARGV[2]) then return {'notdue', '', ''} end\n"
              "local s = redis.call('HMGET', KEYS[1], 'state', 'on_timeout', 'keep_memory')\n"
              "if s[1] == 'running' and s[2] == 'pause' then\n"
              "  local p = pause(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3],\n"
              "    s[3] == '0' and '0' or '1')\n"
              "  p[1] = 'pause'\n"
              "  return p\n"
              "end\n"
              "return {'kill', '', ''}\n",
    ""};

struct pause_keys {
    char sb[160], active[128], timeouts[128], ready[160], info[128];
};

static void keys_of(struct pause_keys *k, const char *ws, const char *sbid)
{
    snprintf(k->sb, sizeof(k->sb), K_SB, ws, sbid);
    snprintf(k->active, sizeof(k->active), K_ACTIVE, ws);
    snprintf(k->timeouts, sizeof(k->timeouts), K_TIMEOUTS, ws);
    snprintf(k->ready, sizeof(k->ready), K_READY, ws, sbid);
    snprintf(k->info, sizeof(k->info), K_WS_INFO, ws);
}

/* What a script's reply holds past {outcome, worker, pool[, limit]}: a
 * pause's (and a deadline claim's) 5th element is the memory it keeps; a
 * resume's 5th the policy to apply (or, refused for NETWORK, "add" or
 * "remove"), its 6th 1 for a fresh start. */
enum reply_shape { REPLY_PAUSE, REPLY_RESUME };

/* The reply r of a script of that shape into t; 0, or -1 when Redis failed
 * (or out of memory). */
static int transition_reply(redisReply *r, enum reply_shape shape, struct sandbox_transition *t)
{
    const char *egress;

    t->egress = NULL;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 3) {
        if (r)
            freeReplyObject(r);
        return -1;
    }
    t->outcome = transition_outcome_parse(reply_str(r->element[0]), &t->refused);
    snprintf(t->worker, sizeof(t->worker), "%s", reply_str(r->element[1]) ?: "");
    snprintf(t->pool, sizeof(t->pool), "%s", reply_str(r->element[2]) ?: "");
    t->limit = r->elements > 3 ? (long)reply_int(r->element[3], 0) : 0;
    t->keep_memory = 1;
    if (shape == REPLY_PAUSE && r->elements > 4)
        t->keep_memory = reply_int(r->element[4], 1) != 0;
    if (shape == REPLY_RESUME && r->elements > 5) {
        t->keep_memory = reply_int(r->element[5], 0) == 0;
        egress = reply_str(r->element[4]);
        if (egress && *egress && !(t->egress = strdup(egress))) {
            freeReplyObject(r);
            return -1;
        }
    }
    freeReplyObject(r);
    return 0;
}

/* The pause script and the deadline claim take the same keys and arguments
 * (the claim reads the memory a pause keeps from the record). */
static int eval_pause_shaped(struct rconn *rc, struct rscript *script, const char *ws,
                             const char *sbid, long long hold_until, int keep_memory,
                             struct sandbox_transition *t)
{
    struct pause_keys k = {0};
    char now[24], hold[24];

    keys_of(&k, ws, sbid);
    snprintf(now, sizeof(now), "%lld", (long long)clock_now_ms());
    snprintf(hold, sizeof(hold), "%lld", hold_until);
    const char *argv[8] = {k.sb, k.active, k.timeouts, k.ready,
                           sbid, now,      hold,       keep_memory ? "1" : "0"};
    return transition_reply(rconn_eval(rc, script, 4, 4, argv), REPLY_PAUSE, t);
}

int sandbox_mark_pausing(struct rconn *rc, const char *ws, const char *sbid, long long hold_until,
                         int keep_memory, struct sandbox_transition *t)
{
    return eval_pause_shaped(rc, &pause_script, ws, sbid, hold_until, keep_memory, t);
}

int sandbox_mark_resuming(struct rconn *rc, const char *ws, const char *sbid,
                          long long reserve_until, long ceiling, long timeout_s, int fresh,
                          struct sandbox_transition *t)
{
    struct pause_keys k = {0};
    char now[24], until[24], dflt[24], ceil[24], timeout[24] = "";

    keys_of(&k, ws, sbid);
    snprintf(now, sizeof(now), "%lld", (long long)clock_now_ms());
    snprintf(until, sizeof(until), "%lld", reserve_until);
    snprintf(dflt, sizeof(dflt), "%ld", ws_limit_defs[WS_LIMIT_MAX_CONCURRENT].dflt);
    snprintf(ceil, sizeof(ceil), "%ld", ceiling);
    if (timeout_s >= 0)
        snprintf(timeout, sizeof(timeout), "%ld", timeout_s);
    const char *argv[12] = {k.sb, k.active, k.info, k.timeouts, k.ready, sbid,
                            now,  until,    dflt,   ceil,       timeout, fresh ? "1" : "0"};
    return transition_reply(rconn_eval(rc, &resume_script, 5, 7, argv), REPLY_RESUME, t);
}

int sandbox_timeout_claim(struct rconn *rc, const char *ws, const char *sbid, long long hold_until,
                          struct sandbox_transition *t)
{
    return eval_pause_shaped(rc, &timeout_script, ws, sbid, hold_until, 1, t);
}
