#include "sandbox_store.h"

#include "clock.h"
#include "keys.h"
#include "record_read.h"
#include "sandbox_fields.h"
#include "telemetry.h"
#include "wake.h"

#include <stdio.h>
#include <string.h>

#define SB_KEYS(ws, sbid)                                                                          \
    char k_sb[160], k_sbs[128], k_active[128], k_timeouts[128], k_pending[128];                    \
    snprintf(k_sb, sizeof(k_sb), K_SB, ws, sbid);                                                  \
    snprintf(k_sbs, sizeof(k_sbs), K_SBS, ws);                                                     \
    snprintf(k_active, sizeof(k_active), K_ACTIVE, ws);                                            \
    snprintf(k_timeouts, sizeof(k_timeouts), K_TIMEOUTS, ws);                                      \
    snprintf(k_pending, sizeof(k_pending), K_PENDING, ws)

static struct rscript insert_script = {"sandbox_insert",
                                       "redis.call('HSET', KEYS[1], unpack(ARGV, 3))\n"
                                       "redis.call('SADD', KEYS[2], ARGV[1])\n"
                                       "redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])\n"
                                       "return 1\n",
                                       ""};

static struct rscript remove_script = {"sandbox_remove",
                                       "local w = redis.call('HMGET', KEYS[1], 'worker', 'pool')\n"
                                       "if redis.call('DEL', KEYS[1]) == 0 then return false end\n"
                                       "redis.call('SREM', KEYS[2], ARGV[1])\n"
                                       "for i = 3, 5 do redis.call('ZREM', KEYS[i], ARGV[1]) end\n"
                                       "redis.call('DEL', KEYS[6], KEYS[7])\n"
                                       "return {w[1] or '', w[2] or ''}\n",
                                       ""};

/* pending -> running only for the worker it was placed on, and only while its
 * admission reservation still stands: a sandbox whose reservation lapsed was
 * given up on (its create answered an error), so the worker must kill it.
 * pausing -> paused and resuming -> running on the worker's word (decision
 * 0044); a report older than the command (running while pausing, paused while
 * resuming) changes nothing. The second element says whether a create, pause
 * or resume waits on this change. */
static struct rscript report_script = {
    "sandbox_report",
    "local s = redis.call('HMGET', KEYS[1], 'state', 'worker', 'timeout')\n"
    "if not s[1] or s[2] ~= ARGV[2] then return {'kill', 0} end\n"
    "local st, rep, now = s[1], ARGV[3], tonumber(ARGV[5])\n"
    "local live = {running = 1, pausing = 1, paused = 1, resuming = 1}\n"
    "if rep == 'running' and st == 'resuming' then\n"
    "  local expires = now + tonumber(s[3]) * 1000\n"
    "  redis.call('HSET', KEYS[1], 'state', 'running', 'expires_at', expires)\n"
    "  redis.call('ZADD', KEYS[2], '+inf', ARGV[1])\n"
    "  redis.call('ZADD', KEYS[3], expires, ARGV[1])\n"
    "  return {'resumed', 1}\n"
    "end\n"
    "if rep == 'running' then\n"
    "  if live[st] then return {'ignored', 0} end\n"
    "  if st ~= 'pending' then return {'kill', 0} end\n"
    "  if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return {'kill', 1} end\n"
    "  local expires = now + tonumber(s[3]) * 1000\n"
    "  redis.call('HSET', KEYS[1], 'state', 'running', 'started_at', now, 'expires_at', expires)\n"
    "  redis.call('ZADD', KEYS[2], '+inf', ARGV[1])\n"
    "  redis.call('ZADD', KEYS[3], expires, ARGV[1])\n"
    "  redis.call('ZREM', KEYS[4], ARGV[1])\n"
    "  return {'started', 1}\n"
    "end\n"
    "if rep == 'paused' then\n"
    "  if st ~= 'pausing' then return {'ignored', 0} end\n"
    "  redis.call('HSET', KEYS[1], 'state', 'paused')\n"
    "  return {'paused', 1}\n"
    "end\n"
    "if not live[st] and (st ~= 'pending' or rep == 'missing') then\n"
    "  return {'ignored', 0}\n"
    "end\n"
    "local waited = (st == 'running' or st == 'paused') and 0 or 1\n"
    "local ended = rep == 'failed' and 'error' or 'exited'\n"
    "redis.call('HSET', KEYS[1], 'state', ended, 'reason', ARGV[4], 'ended_at', now)\n"
    "redis.call('ZREM', KEYS[2], ARGV[1])\n"
    "redis.call('ZREM', KEYS[4], ARGV[1])\n"
    "return {'stopped', waited}\n",
    ""};

static struct rscript orphan_script = {
    "sandbox_orphan",
    "local s = redis.call('HMGET', KEYS[1], 'state', 'worker')\n"
    "if not s[1] or s[2] ~= ARGV[2] then return 'skip' end\n"
    "if s[1] == 'pending' then return 'replace' end\n"
    "local live = {running = 1, pausing = 1, paused = 1, resuming = 1}\n"
    "if live[s[1]] then\n"
    "  redis.call('HSET', KEYS[1], 'state', 'lost', 'reason', 'worker lost', 'ended_at', ARGV[3])\n"
    "  redis.call('ZREM', KEYS[2], ARGV[1])\n"
    "  redis.call('ZREM', KEYS[3], ARGV[1])\n"
    "  return 'lost'\n"
    "end\n"
    "return 'skip'\n",
    ""};

/* A move is a new start: the policy recorded by PUT .../network (egress_next,
 * "null" for none) becomes the sandbox's policy, if it is still the one the
 * caller read (a newer one stays recorded for the start after). */
static struct rscript move_script = {
    "sandbox_move",
    "local s = redis.call('HMGET', KEYS[1], 'state', 'worker', 'egress_next')\n"
    "if s[1] ~= 'pending' or s[2] ~= ARGV[1] then return 0 end\n"
    "redis.call('HSET', KEYS[1], 'pool', ARGV[2], 'worker', ARGV[3], 'runtime', ARGV[4],\n"
    "  'tier', ARGV[5])\n"
    "if ARGV[6] ~= '' and s[3] == ARGV[6] then\n"
    "  local none = ARGV[6] == 'null'\n"
    "  redis.call('HSET', KEYS[1], 'egress', none and '' or ARGV[6],\n"
    "    'egress_policy', none and '0' or '1')\n"
    "  redis.call('HDEL', KEYS[1], 'egress_next')\n"
    "end\n"
    "return 1\n",
    ""};

/* Only a live (pending or running) sandbox takes a policy for its next start. */
static struct rscript egress_next_script = {
    "sandbox_set_egress_next",
    "local st = redis.call('HGET', KEYS[1], 'state')\n"
    "if not st then return 0 end\n"
    "if st ~= 'pending' and st ~= 'running' and st ~= 'pausing' and st ~= 'paused' and\n"
    "  st ~= 'resuming' then return 2 end\n"
    "redis.call('HSET', KEYS[1], 'egress_next', ARGV[1])\n"
    "return 1\n",
    ""};

/* A live change (decision 0091): a running sandbox whose proxy is there
 * (a policy in force) on the worker the caller read takes the new policy now;
 * a pending "next" one is superseded by it. */
static struct rscript egress_live_script = {
    "sandbox_set_egress_live",
    "local st = redis.call('HGET', KEYS[1], 'state')\n"
    "if not st then return 0 end\n"
    "local cur = redis.call('HGET', KEYS[1], 'egress') or ''\n"
    "if st ~= 'running' or cur == '' or cur == 'null' or\n"
    "  redis.call('HGET', KEYS[1], 'worker') ~= ARGV[2] then return 3 end\n"
    "redis.call('HSET', KEYS[1], 'egress', ARGV[1])\n"
    "redis.call('HDEL', KEYS[1], 'egress_next')\n"
    "return 1\n",
    ""};

static struct rscript deadline_script = {
    "sandbox_set_deadline",
    "if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end\n"
    "local cur = tonumber(redis.call('HGET', KEYS[1], 'expires_at') or '0')\n"
    "if ARGV[3] == '1' and cur >= tonumber(ARGV[2]) then return 1 end\n"
    "redis.call('HSET', KEYS[1], 'expires_at', ARGV[2])\n"
    "redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])\n"
    "return 1\n",
    ""};

/* The data plane knows only a sandbox id: this global key says whose it is.
 * Written after the record and removed after it, so it never outlives it for
 * long; a stale entry just leads to a record that is not there (404). */
static int set_index(struct rconn *rc, const char *sbid, const char *ws)
{
    char key[96];
    redisReply *r;

    snprintf(key, sizeof(key), K_SB_INDEX, sbid);
    r = ws ? rconn_cmd(rc, 0, "SET %s %s", key, ws) : rconn_cmd(rc, 0, "DEL %s", key);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

int sandbox_workspace_of(struct rconn *rc, const char *sbid, char ws[33])
{
    char key[96];

    snprintf(key, sizeof(key), K_SB_INDEX, sbid);
    return record_string_read(rc, key, ws, 33);
}

int sandbox_insert(struct rconn *rc, const struct sandbox_record *r, int64_t pending_deadline)
{
    const char *argv[RCONN_EVAL_MAX];
    char deadline[24];
    struct sandbox_encoded e;

    SB_KEYS(r->ws, r->id);
    (void)k_active;
    (void)k_timeouts;
    sandbox_record_encode(r, SANDBOX_ENCODE_CREATE, &e);
    if (e.n * 2 + 5 > RCONN_EVAL_MAX)
        return -1;
    snprintf(deadline, sizeof(deadline), "%lld", (long long)pending_deadline);
    argv[0] = k_sb;
    argv[1] = k_sbs;
    argv[2] = k_pending;
    argv[3] = r->id;
    argv[4] = deadline;
    memcpy(argv + 5, e.fv, sizeof(e.fv[0]) * (size_t)e.n * 2);
    if (record_eval_int(rc, &insert_script, 3, 2 + e.n * 2, argv) != 1)
        return -1;
    return set_index(rc, r->id, r->ws);
}

int sandbox_remove(struct rconn *rc, const char *ws, const char *sbid, char worker[33],
                   char pool[33])
{
    redisReply *r;
    int found;

    SB_KEYS(ws, sbid);
    char k_metrics[192], k_logs[192];
    telemetry_keys(ws, sbid, k_metrics, k_logs, sizeof(k_metrics));
    const char *argv[8] = {k_sb, k_sbs, k_active, k_timeouts, k_pending, k_metrics, k_logs, sbid};
    r = rconn_eval(rc, &remove_script, 7, 1, argv);
    if (!r)
        return -1;
    found = r->type == REDIS_REPLY_ARRAY && r->elements == 2;
    if (found)
        set_index(rc, sbid, NULL);
    snprintf(worker, 33, "%s", found ? r->element[0]->str : "");
    snprintf(pool, 33, "%s", found ? r->element[1]->str : "");
    freeReplyObject(r);
    return found;
}

enum report_outcome sandbox_report(struct rconn *rc, const char *ws, const char *sbid,
                                   const char *wid, enum sandbox_reported state, const char *reason,
                                   int *was_pending)
{
    char now[24];
    redisReply *r;
    enum report_outcome out = REPORT_IGNORED;

    SB_KEYS(ws, sbid);
    (void)k_sbs;
    snprintf(now, sizeof(now), "%lld", (long long)clock_now_ms());
    const char *args[9] = {k_sb,
                           k_active,
                           k_timeouts,
                           k_pending,
                           sbid,
                           wid,
                           sandbox_reported_name(state),
                           reason ? reason : "",
                           now};
    r = rconn_eval(rc, &report_script, 4, 5, args);
    if (!r)
        return REPORT_IGNORED;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        *was_pending = (int)r->element[1]->integer;
        out = report_outcome_parse(r->element[0]->str);
    }
    freeReplyObject(r);
    return out;
}

int sandbox_orphan(struct rconn *rc, const char *ws, const char *sbid, const char *wid,
                   enum orphan_decision *out)
{
    char now[24];
    redisReply *r;

    SB_KEYS(ws, sbid);
    (void)k_sbs;
    (void)k_pending;
    snprintf(now, sizeof(now), "%lld", (long long)clock_now_ms());
    const char *argv[6] = {k_sb, k_active, k_timeouts, sbid, wid, now};
    r = rconn_eval(rc, &orphan_script, 3, 3, argv);
    if (!r)
        return -1;
    *out = orphan_decision_parse(reply_str(r)); /* nil: SKIP */
    freeReplyObject(r);
    return 0;
}

int sandbox_move(struct rconn *rc, const char *ws, const char *sbid, const char *old_wid,
                 const char *pool, const char *wid, const char *runtime, const char *tier,
                 const char *egress_next)
{
    char k_sb[160];
    const char *argv[7] = {k_sb, old_wid, pool, wid, runtime, tier, egress_next};

    snprintf(k_sb, sizeof(k_sb), K_SB, ws, sbid);
    return record_eval_int(rc, &move_script, 1, 6, argv);
}

int sandbox_set_egress_next(struct rconn *rc, const char *ws, const char *sbid, const char *policy)
{
    char k_sb[160];
    const char *argv[2] = {k_sb, policy ? policy : "null"};

    snprintf(k_sb, sizeof(k_sb), K_SB, ws, sbid);
    return record_eval_int(rc, &egress_next_script, 1, 1, argv);
}

int sandbox_set_egress_live(struct rconn *rc, const char *ws, const char *sbid, const char *policy,
                            const char *worker)
{
    char k_sb[160];
    const char *argv[3] = {k_sb, policy, worker};

    snprintf(k_sb, sizeof(k_sb), K_SB, ws, sbid);
    return record_eval_int(rc, &egress_live_script, 1, 2, argv);
}

int sandbox_set_deadline(struct rconn *rc, const char *ws, const char *sbid, int64_t expires_ms,
                         int only_extend)
{
    char k_sb[160], k_timeouts[128], when[24];
    const char *argv[5] = {k_sb, k_timeouts, sbid, when, only_extend ? "1" : "0"};

    snprintf(k_sb, sizeof(k_sb), K_SB, ws, sbid);
    snprintf(k_timeouts, sizeof(k_timeouts), K_TIMEOUTS, ws);
    snprintf(when, sizeof(when), "%lld", (long long)expires_ms);
    return record_eval_int(rc, &deadline_script, 2, 3, argv);
}

int sandbox_wake(struct rconn *rc, const char *ws, const char *sbid, const char *msg)
{
    char key[160];

    snprintf(key, sizeof(key), K_READY, ws, sbid);
    return wake_push(rc, key, msg, 120000);
}
