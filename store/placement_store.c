#include "placement_store.h"

#include "clock.h"
#include "keys.h"
#include "worker_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One pool's pick, as a script so that "is there room?" and "take it" cannot be
 * split by another create. Workers are visited in load order (the zset score is
 * used/slots), so the first eligible one is the least loaded. When none is
 * eligible the script says how far the best one got (template, egress, tier,
 * capacity), which becomes the error: 404, 409, 409, 503.
 *
 * Worker hashes are addressed from the pool's prefix (ARGV[1]) and a worker's
 * sandbox map by the suffix ARGV[16], both from worker_store (the layout is
 * spelled once, in keys.h); they share the pool's hash tag, so the script
 * stays within one slot.
 *
 * Runtimes are stored as "name:rank,…" with rank -1 for UNKNOWN. Without a
 * requirement the weakest known tier is used (runc, the cheapest); with one, the
 * weakest that satisfies it. UNKNOWN satisfies no requirement.
 *
 * A create a warm sandbox could serve (ARGV[17] "1") goes to the least loaded
 * worker whose warm pool of the template and runtime has one ready (the
 * worker's last heartbeat said so), else to the least loaded (decision 0082).
 *
 * The fleet share (decision 0034): on the unscoped fleet a workspace may hold
 * at most share% of the slots of the fleet's placeable workers (at least one).
 * What it holds is counted from the workers' own sandbox maps, the same entries
 * that hold the slots, so the count cannot drift from them; and it is checked
 * in the script that takes the slot, so concurrent creates cannot overshoot.
 * It is looked at only once the capacity stage is reached: a create that fails
 * for another reason (template, egress, tier) says that reason, and one over
 * its share hears of the share even when the fleet is also full. */
static struct rscript pick_script = {
    "placement_pick",
    WORKER_SLOT_LUA
    "local prefix, mode, tmpl = ARGV[1], ARGV[2], ARGV[3]\n"
    "local egress, need, req = ARGV[4] == '1', ARGV[5] == '1', tonumber(ARGV[6])\n"
    "local cpu, mem, now = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])\n"
    "local exclude, sbid, val, target = ARGV[10], ARGV[11], ARGV[12], ARGV[13]\n"
    "local ws, share, sbs = ARGV[14], tonumber(ARGV[15]), ARGV[16]\n"
    "local function placeable(w)\n"
    "  return w[1] == 'alive' and tonumber(w[2]) > now and (not w[3] or w[3] == '')\n"
    "end\n"
    "local function over_share()\n"
    "  if share >= 100 then return nil end\n"
    "  local total, held = 0, 0\n"
    "  for _, wid in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do\n"
    "    local w = redis.call('HMGET', prefix .. wid, 'state', 'lease_until', 'problem', 'slots')\n"
    "    if placeable(w) then total = total + tonumber(w[4]) end\n"
    "    for _, v in ipairs(redis.call('HVALS', prefix .. wid .. sbs)) do\n"
    "      if slot_decode(v) == ws then held = held + 1 end\n"
    "    end\n"
    "  end\n"
    "  local cap = math.max(1, math.floor(total * share / 100))\n"
    "  if held >= cap then return {held, cap, total} end\n"
    "  return nil\n"
    "end\n"
    "local function runtime(list)\n"
    "  local best, brank, unk = nil, 99, nil\n"
    "  for name, rank in string.gmatch(list, '([^:,]+):(-?%d+)') do\n"
    "    rank = tonumber(rank)\n"
    "    if rank < 0 then unk = unk or name\n"
    "    elseif (not need or rank >= req) and rank < brank then best, brank = name, rank end\n"
    "  end\n"
    "  if best then return best, brank end\n"
    "  if not need and unk then return unk, -1 end\n"
    "  return nil\n"
    "end\n"
    "local prefer = ARGV[17] == '1'\n"
    "local stage, alive = 0, 0\n"
    /* how far wid gets (stage 4: it fits), its fields, runtime and rank */
    "local function fit(wid)\n"
    "  local w = redis.call('HMGET', prefix .. wid, 'state', 'lease_until', 'problem', "
    "'templates',\n"
    "    'egress', 'runtimes', 'slots', 'used', 'cpu', 'cpu_used', 'mem', 'mem_used', 'public',\n"
    "    'warm_ready')\n"
    "  if wid == exclude or not placeable(w) then return -1 end\n"
    "  alive = alive + 1\n"
    "  if tmpl ~= '' and not string.find(w[4], ',' .. tmpl .. ',', 1, true) then return 0 end\n"
    "  if egress and w[5] ~= '1' then return 1 end\n"
    "  local rt, rank = runtime(w[6])\n"
    "  if not rt then return 2 end\n"
    "  if tonumber(w[8]) < tonumber(w[7]) and tonumber(w[10]) + cpu <= tonumber(w[9]) + 1e-9\n"
    "     and tonumber(w[12]) + mem <= tonumber(w[11]) then return 4, w, rt, rank end\n"
    "  return 3\n"
    "end\n"
    "local function take(wid, w, rt, rank, warm)\n"
    "  local over = over_share()\n"
    "  if over then return {3, alive, over[1], over[2], over[3]} end\n"
    "  local slots, used = tonumber(w[7]), tonumber(w[8])\n"
    "  if mode == 'reserve' then\n"
    "    redis.call('HINCRBY', prefix .. wid, 'used', 1)\n"
    "    redis.call('HINCRBYFLOAT', prefix .. wid, 'cpu_used', cpu)\n"
    "    redis.call('HINCRBY', prefix .. wid, 'mem_used', mem)\n"
    "    redis.call('HSET', prefix .. wid .. sbs, sbid, val)\n"
    "    redis.call('ZADD', KEYS[1], (used + 1) / slots, wid)\n"
    "  end\n"
    "  return {4, alive, wid, rt, rank, tostring(used / slots), w[13] or '1', warm}\n"
    "end\n"
    /* The least loaded that fits, unless a more loaded one holds a warm
     * sandbox of the template and its runtime (decision 0082). */
    "local ids = {target}\n"
    "if target == '' then ids = redis.call('ZRANGE', KEYS[1], 0, -1) end\n"
    "local first\n"
    "for _, wid in ipairs(ids) do\n"
    "  local s, w, rt, rank = fit(wid)\n"
    "  if s == 4 then\n"
    "    if prefer and string.find(w[14] or '', ',' .. tmpl .. ':' .. rt .. ',', 1, true) then\n"
    "      return take(wid, w, rt, rank, '1')\n"
    "    end\n"
    "    if not prefer then return take(wid, w, rt, rank, '0') end\n"
    "    first = first or {wid, w, rt, rank}\n"
    "  elseif s > stage then stage = s end\n"
    "end\n"
    "if first then return take(first[1], first[2], first[3], first[4], '0') end\n"
    "if stage == 3 then\n"
    "  local over = over_share()\n"
    "  if over then return {3, alive, over[1], over[2], over[3]} end\n"
    "end\n"
    "return {stage, alive}\n",
    ""};

/* Giving a slot back is keyed by the sandbox's entry in the worker's map, so a
 * second release (a retry, two corral-sched copies) changes nothing. */
static struct rscript release_script = {
    "placement_release",
    WORKER_SLOT_LUA /* slot_decode */
    "local v = redis.call('HGET', KEYS[2], ARGV[1])\n"
    "if not v then return 0 end\n"
    "redis.call('HDEL', KEYS[2], ARGV[1])\n"
    "local _, cpu, mem = slot_decode(v)\n"
    "local used = redis.call('HINCRBY', KEYS[1], 'used', -1)\n"
    "redis.call('HINCRBYFLOAT', KEYS[1], 'cpu_used', -(cpu or 0))\n"
    "redis.call('HINCRBY', KEYS[1], 'mem_used', -(mem or 0))\n"
    "if redis.call('HGET', KEYS[1], 'state') == 'alive' then\n"
    "  local slots = tonumber(redis.call('HGET', KEYS[1], 'slots'))\n"
    "  redis.call('ZADD', KEYS[3], used / slots, ARGV[2])\n"
    "end\n"
    "return 1\n",
    ""};

static void read_pick(const redisReply *r, struct pick *out)
{
    memset(out, 0, sizeof(*out));
    out->stage = (enum place_stage)r->element[0]->integer;
    out->alive = (long)r->element[1]->integer;
    if (out->stage == PLACE_STAGE_FITS && r->elements == 8) {
        snprintf(out->wid, sizeof(out->wid), "%s", r->element[2]->str);
        snprintf(out->runtime, sizeof(out->runtime), "%s", r->element[3]->str);
        out->rank = (long)r->element[4]->integer;
        out->load = atof(r->element[5]->str);
        out->public_ok = strcmp(r->element[6]->str, "0") != 0;
        out->warm = strcmp(r->element[7]->str, "1") == 0;
    } else if (out->stage == PLACE_STAGE_TIER && r->elements == 5) {
        out->over_share = 1;
        out->held = (long)r->element[2]->integer;
        out->cap = (long)r->element[3]->integer;
        out->total = (long)r->element[4]->integer;
    }
}

/* The share is the fleet's rule: a workspace's own pool has none. */
int placement_store_pick(struct rconn *rc, const char *ws, const char *pool, enum pick_mode mode,
                         const struct placement_need *n, const char *sbid, const char *val,
                         const char *target, struct pick *out)
{
    char zkey[128], prefix[128], egress[2], need[2], req[8], cpu[32], mem[24], now[24], share[8];
    const char *argv[18] = {zkey,
                            prefix,
                            mode == PICK_RESERVE ? "reserve" : "peek",
                            n->template_id,
                            egress,
                            need,
                            req,
                            cpu,
                            mem,
                            now,
                            n->exclude,
                            sbid,
                            val,
                            target,
                            ws,
                            share,
                            worker_sbs_suffix(),
                            n->warm && n->template_id[0] ? "1" : "0"};
    redisReply *r;

    snprintf(zkey, sizeof(zkey), K_WORKERS, pool);
    worker_key_prefix(prefix, sizeof(prefix), pool);
    snprintf(egress, sizeof(egress), "%d", n->egress ? 1 : 0);
    snprintf(need, sizeof(need), "%d", n->has_require ? 1 : 0);
    snprintf(req, sizeof(req), "%d", (int)n->require);
    snprintf(cpu, sizeof(cpu), "%.3f", n->cpu_cores);
    snprintf(mem, sizeof(mem), "%ld", n->memory_mb);
    snprintf(now, sizeof(now), "%lld", (long long)clock_now_ms());
    snprintf(share, sizeof(share), "%d", pool[0] ? 100 : n->fleet_share);
    r = rconn_eval(rc, &pick_script, 1, 17, argv);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 2) {
        if (r)
            freeReplyObject(r);
        return -1;
    }
    read_pick(r, out);
    freeReplyObject(r);
    return 0;
}

int placement_release(struct rconn *rc, const char *pool, const char *wid, const char *sbid)
{
    char wkey[160], skey[160], zkey[128];
    const char *argv[5] = {wkey, skey, zkey, sbid, wid};
    redisReply *r;
    int n;

    worker_key(wkey, sizeof(wkey), pool, wid);
    snprintf(skey, sizeof(skey), K_WORKER_SBS, pool, wid);
    snprintf(zkey, sizeof(zkey), K_WORKERS, pool);
    r = rconn_eval(rc, &release_script, 3, 2, argv);
    if (!r)
        return -1;
    n = (int)reply_int(r, 0);
    freeReplyObject(r);
    return n;
}
