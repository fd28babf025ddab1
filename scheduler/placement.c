#include "placement.h"

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
    "local ids = {target}\n"
    "if target == '' then ids = redis.call('ZRANGE', KEYS[1], 0, -1) end\n"
    "local stage, alive = 0, 0\n"
    "for _, wid in ipairs(ids) do\n"
    "  local w = redis.call('HMGET', prefix .. wid, 'state', 'lease_until', 'problem', "
    "'templates',\n"
    "    'egress', 'runtimes', 'slots', 'used', 'cpu', 'cpu_used', 'mem', 'mem_used', 'public')\n"
    "  if wid ~= exclude and placeable(w) then\n"
    "    alive = alive + 1\n"
    "    local s = 0\n"
    "    if tmpl == '' or string.find(w[4], ',' .. tmpl .. ',', 1, true) then s = 1\n"
    "      if (not egress) or w[5] == '1' then s = 2\n"
    "        local rt, rank = runtime(w[6])\n"
    "        if rt then s = 3\n"
    "          local slots, used = tonumber(w[7]), tonumber(w[8])\n"
    "          if used < slots and tonumber(w[10]) + cpu <= tonumber(w[9]) + 1e-9\n"
    "             and tonumber(w[12]) + mem <= tonumber(w[11]) then\n"
    "            local over = over_share()\n"
    "            if over then return {3, alive, over[1], over[2], over[3]} end\n"
    "            if mode == 'reserve' then\n"
    "              redis.call('HINCRBY', prefix .. wid, 'used', 1)\n"
    "              redis.call('HINCRBYFLOAT', prefix .. wid, 'cpu_used', cpu)\n"
    "              redis.call('HINCRBY', prefix .. wid, 'mem_used', mem)\n"
    "              redis.call('HSET', prefix .. wid .. sbs, sbid, val)\n"
    "              redis.call('ZADD', KEYS[1], (used + 1) / slots, wid)\n"
    "            end\n"
    "            return {4, alive, wid, rt, rank, tostring(used / slots), w[13] or '1'}\n"
    "          end\n"
    "        end\n"
    "      end\n"
    "    end\n"
    "    if s > stage then stage = s end\n"
    "  end\n"
    "end\n"
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

struct pick {
    long stage, alive;
    char wid[33], runtime[33];
    long rank;
    double load;
    int public_ok;         /* its worker lets sandboxes be public (decision 0062) */
    int over_share;        /* the fleet had room, but not within the workspace's share */
    long held, cap, total; /* then: its sandboxes there, its share, the fleet's slots */
};

static void read_pick(const redisReply *r, struct pick *out)
{
    memset(out, 0, sizeof(*out));
    out->stage = (long)r->element[0]->integer;
    out->alive = (long)r->element[1]->integer;
    if (out->stage == 4 && r->elements == 7) {
        snprintf(out->wid, sizeof(out->wid), "%s", r->element[2]->str);
        snprintf(out->runtime, sizeof(out->runtime), "%s", r->element[3]->str);
        out->rank = (long)r->element[4]->integer;
        out->load = atof(r->element[5]->str);
        out->public_ok = strcmp(r->element[6]->str, "0") != 0;
    } else if (out->stage == 3 && r->elements == 5) {
        out->over_share = 1;
        out->held = (long)r->element[2]->integer;
        out->cap = (long)r->element[3]->integer;
        out->total = (long)r->element[4]->integer;
    }
}

static void take_pick(struct placement *out, const char *pool, const struct pick *p)
{
    *out = (struct placement){.tier = (enum tier)p->rank, .public_ok = p->public_ok};
    snprintf(out->pool, sizeof(out->pool), "%s", pool);
    snprintf(out->wid, sizeof(out->wid), "%s", p->wid);
    snprintf(out->runtime, sizeof(out->runtime), "%s", p->runtime);
}

/* The share is the fleet's rule: a workspace's own pool has none. */
static int pick_in_pool(struct rconn *rc, const char *ws, const char *pool, const char *mode,
                        const struct placement_need *n, const char *sbid, const char *val,
                        const char *target, struct pick *out)
{
    char zkey[128], prefix[128], egress[2], need[2], req[8], cpu[32], mem[24], now[24], share[8];
    const char *argv[17] = {zkey,
                            prefix,
                            mode,
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
                            worker_sbs_suffix()};
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
    r = rconn_eval(rc, &pick_script, 1, 16, argv);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 2) {
        if (r)
            freeReplyObject(r);
        return -1;
    }
    read_pick(r, out);
    freeReplyObject(r);
    return 0;
}

static void explain(const struct placement_need *n, const struct pick *a, const struct pick *b,
                    struct sched_error *err)
{
    long stage = a->stage > b->stage ? a->stage : b->stage;

    if (a->alive + b->alive == 0)
        sched_error_set(err, 503, "no worker is available to this workspace");
    else if (stage == 0)
        sched_error_set(err, 404, "template: '%s' not found", n->template_id);
    else if (stage == 1)
        sched_error_set(err, 409,
                        "worker capability unavailable: no eligible worker can enforce "
                        "allowed_domains (egress policy)");
    else if (stage == 3 && b->over_share)
        sched_error_set(err, 429,
                        "fleet_share: this workspace holds %ld sandboxes on the shared fleet, "
                        "its share of %ld (fleet_share = %d%% of %ld slots); retry when one "
                        "ends, or add workers of its own",
                        b->held, b->cap, n->fleet_share, b->total);
    else if (stage == 2)
        sched_error_set(err, 409,
                        "require_isolation: no eligible worker offers isolation %s; nothing "
                        "was created",
                        tier_name(n->require));
    else
        sched_error_set(err, 503,
                        "no eligible worker has free capacity (slots, cpu_cores, memory_mb)");
}

/* Pinned to one worker (it holds the snapshot the sandbox is made from): that
 * one or none. Its pool is the workspace's or the fleet's, from a record of
 * this workspace, so the tenant rule holds. */
static int reserve_pinned(struct rconn *rc, const char *ws, const struct placement_need *need,
                          const char *sbid, const char *val, struct placement *out,
                          struct sched_error *err)
{
    struct pick got, none = {0};

    if (pick_in_pool(rc, ws, need->pin_pool, "reserve", need, sbid, val, need->pin_worker, &got)) {
        sched_error_set(err, 503, "state store unavailable");
        return -1;
    }
    if (got.stage != 4) {
        if (got.alive == 0)
            sched_error_set(err, 503,
                            "the worker that holds this snapshot (%s) is not available; "
                            "snapshots stay on the worker that made them",
                            need->pin_worker);
        else
            explain(need, &got, &none, err);
        return -1;
    }
    take_pick(out, need->pin_pool, &got);
    return 0;
}

int placement_reserve(struct rconn *rc, const char *ws, const struct placement_need *need,
                      const char *sbid, struct placement *out, struct sched_error *err)
{
    char val[160];
    struct pick own, fleet, got;
    struct worker_slot slot = {.cpu = need->cpu_cores, .mem = need->memory_mb};

    snprintf(slot.ws, sizeof(slot.ws), "%s", ws);
    slot.since_ms = (long long)clock_now_ms();
    if (worker_slot_encode(&slot, val, sizeof(val)) != 0) {
        sched_error_set(err, 500, "slot value too long");
        return -1;
    }
    if (need->pin_worker && *need->pin_worker)
        return reserve_pinned(rc, ws, need, sbid, val, out, err);
    /* A few tries: another create may take the chosen worker's last slot between
     * the peek and the reservation; then we look again. */
    for (int attempt = 0; attempt < 4; attempt++) {
        const char *pool;
        const struct pick *best;

        if (pick_in_pool(rc, ws, ws, "peek", need, sbid, val, "", &own) ||
            pick_in_pool(rc, ws, "", "peek", need, sbid, val, "", &fleet)) {
            sched_error_set(err, 503, "state store unavailable");
            return -1;
        }
        if (own.stage < 4 && fleet.stage < 4) {
            explain(need, &own, &fleet, err);
            return -1;
        }
        best = (own.stage == 4 && (fleet.stage < 4 || own.load <= fleet.load)) ? &own : &fleet;
        pool = best == &own ? ws : "";
        if (pick_in_pool(rc, ws, pool, "reserve", need, sbid, val, best->wid, &got)) {
            sched_error_set(err, 503, "state store unavailable");
            return -1;
        }
        if (got.stage == 4) {
            take_pick(out, pool, &got);
            return 0;
        }
    }
    sched_error_set(err, 503, "no eligible worker has free capacity (slots, cpu_cores, memory_mb)");
    return -1;
}

int placement_peek(struct rconn *rc, const char *ws, const struct placement_need *need,
                   struct placement *out, struct sched_error *err)
{
    struct pick own, fleet;
    const struct pick *best;

    if (pick_in_pool(rc, ws, ws, "peek", need, "", "", "", &own) ||
        pick_in_pool(rc, ws, "", "peek", need, "", "", "", &fleet)) {
        sched_error_set(err, 503, "state store unavailable");
        return -1;
    }
    if (own.stage < 4 && fleet.stage < 4) {
        explain(need, &own, &fleet, err);
        return -1;
    }
    best = (own.stage == 4 && (fleet.stage < 4 || own.load <= fleet.load)) ? &own : &fleet;
    take_pick(out, best == &own ? ws : "", best);
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
