#include "worker_store.h"

#include "keys.h"
#include "sandbox_codec.h"
#include "tunnel_store.h"
#include "secret.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A worker's "state": alive until its death is claimed (dead). */
enum worker_state { WORKER_STATE_ALIVE, WORKER_STATE_DEAD, WORKER_STATE_COUNT };
static const char *const worker_state_words[WORKER_STATE_COUNT] = {
    [WORKER_STATE_ALIVE] = "alive",
    [WORKER_STATE_DEAD] = "dead",
};

static int state_is_alive(const char *word)
{
    return codec_word_index(worker_state_words, WORKER_STATE_COUNT, word) == WORKER_STATE_ALIVE;
}

int worker_slot_encode(const struct worker_slot *s, char *out, size_t len)
{
    int n = snprintf(out, len, "%s %.3f %ld %lld", s->ws, s->cpu, s->mem, s->since_ms);

    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A number field [p, end) starts with a digit (strto* alone would skip spaces,
 * take signs, "inf") and is followed by want. Returns where the next field
 * starts, or NULL when the field is not that. */
static const char *field_end(const char *p, const char *end, char want)
{
    return *p >= '0' && *p <= '9' && *end == want ? end + (want != '\0') : NULL;
}

int worker_slot_decode(const char *text, struct worker_slot *s)
{
    const char *sp = text ? strchr(text, ' ') : NULL, *p;
    char *end;

    memset(s, 0, sizeof(*s));
    if (!sp || (size_t)(sp - text) >= sizeof(s->ws))
        return -1;
    memcpy(s->ws, text, (size_t)(sp - text));
    errno = 0;
    s->cpu = strtod(sp + 1, &end);
    if (!(p = field_end(sp + 1, end, ' ')))
        goto bad;
    s->mem = strtol(p, &end, 10);
    if (!(p = field_end(p, end, ' ')))
        goto bad;
    s->since_ms = strtoll(p, &end, 10);
    if (!field_end(p, end, '\0') || errno != 0)
        goto bad;
    return 0;
bad:
    memset(s, 0, sizeof(*s));
    return -1;
}

void worker_key(char *out, size_t len, const char *pool, const char *wid)
{
    snprintf(out, len, K_WORKER, pool, wid);
}

void worker_key_prefix(char *out, size_t len, const char *pool)
{
    worker_key(out, len, pool, "");
}

/* K_WORKER_SBS is K_WORKER and a suffix: the suffix is what is left of it
 * once the worker key of the same (empty) pool and id is taken off. */
const char *worker_sbs_suffix(void)
{
    static const char *const sbs = K_WORKER_SBS;
    static const char *const worker = K_WORKER;
    _Static_assert(sizeof(K_WORKER_SBS) > sizeof(K_WORKER), "K_WORKER_SBS extends K_WORKER");

    return strncmp(sbs, worker, strlen(worker)) == 0 ? sbs + strlen(worker) : "";
}

/* Frees r and answers rv: the tail of most calls below. */
static int done(redisReply *r, int rv)
{
    if (r)
        freeReplyObject(r);
    return rv;
}

/* A handshake is one script so that no reader ever sees half a worker: alive
 * but not yet in its pool's sets, or with the new data key but the old usage.
 * It also reads the data key it replaces (the worker keeps accepting it for a
 * moment), bumps poll_seq (a poll still open from before is superseded) and
 * places the worker by load. Field names and values come from C (ARGV[4..]),
 * the layout of the keys too. */
static struct rscript enrol_script = {
    "worker_enrol",
    "local prev = redis.call('HGET', KEYS[1], 'data_key') or ''\n"
    "redis.call('HSET', KEYS[1], unpack(ARGV, 4))\n"
    "redis.call('HINCRBY', KEYS[1], 'poll_seq', 1)\n"
    "if ARGV[3] == '1' then\n"
    "  redis.call('HSET', KEYS[1], 'used', 0, 'cpu_used', 0, 'mem_used', 0)\n"
    "else\n"
    "  redis.call('HSETNX', KEYS[1], 'used', 0)\n"
    "end\n"
    "redis.call('SADD', KEYS[2], ARGV[1])\n"
    "redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])\n"
    "local w = redis.call('HMGET', KEYS[1], 'used', 'slots')\n"
    "redis.call('ZADD', KEYS[4], (tonumber(w[1]) or 0) / tonumber(w[2]), ARGV[1])\n"
    "return prev\n",
    ""};

#define ENROL_ARGS 40

/* The hash's fields as name, value pairs after the script's own arguments. */
static int enrol_fields(const struct worker_enrolment *e, const struct worker_caps *c,
                        const char **argv, char num[6][32])
{
    int n = 0;

    snprintf(num[0], 32, "%d", c->egress ? 1 : 0);
    snprintf(num[1], 32, "%ld", c->slots);
    snprintf(num[2], 32, "%.3f", c->cpu);
    snprintf(num[3], 32, "%ld", c->mem);
    snprintf(num[4], 32, "%lld", e->lease_until);
    snprintf(num[5], 32, "%d", c->public_ok ? 1 : 0);
#define F(name, value) (argv[n++] = (name), argv[n++] = (value))
    F("state", worker_state_words[WORKER_STATE_ALIVE]), F("hostname", c->hostname),
        F("runtimes", c->runtimes);
    F("runtimes_json", c->runtimes_json), F("templates", c->templates);
    F("templates_json", c->templates_json), F("egress", num[0]), F("slots", num[1]);
    F("cpu", num[2]), F("mem", num[3]), F("data_addr", c->data_addr), F("lease_until", num[4]);
    F("secret_mac", e->secret_mac), F("jt", e->join_token), F("data_key", e->data_key);
    F("public", num[5]);
#undef F
    return n;
}

int worker_enrol(struct rconn *rc, const struct worker_enrolment *e, const struct worker_caps *c,
                 char *prev_key, size_t prev_len)
{
    char wkey[160], all[128], leases[128], live[128], lease[24], num[6][32];
    const char *argv[ENROL_ARGS] = {
        wkey, all, leases, live, e->wid, lease, e->reset_usage ? "1" : "0"};
    int nf = enrol_fields(e, c, argv + 7, num);
    redisReply *r;

    worker_key(wkey, sizeof(wkey), e->pool, e->wid);
    snprintf(all, sizeof(all), K_WORKERS_ALL, e->pool);
    snprintf(leases, sizeof(leases), K_LEASES, e->pool);
    snprintf(live, sizeof(live), K_WORKERS, e->pool);
    snprintf(lease, sizeof(lease), "%lld", e->lease_until);
    r = rconn_eval(rc, &enrol_script, 4, 3 + nf, argv);
    if (!r || r->type != REDIS_REPLY_STRING)
        return done(r, -1);
    snprintf(prev_key, prev_len, "%s", r->str);
    return done(r, 0);
}

int worker_check_mac(struct rconn *rc, const char *pool, const char *wid, const char *mac,
                     int *alive)
{
    char key[160];
    const char *stored, *state;
    redisReply *r;
    int ok;

    worker_key(key, sizeof(key), pool, wid);
    r = rconn_cmd(rc, 0, "HMGET %s secret_mac state", key);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2)
        return done(r, -1);
    stored = reply_str(r->element[0]);
    state = reply_str(r->element[1]);
    ok = stored && secret_equal(stored, mac);
    *alive = ok && state_is_alive(state);
    return done(r, ok);
}

/* The lease in the hash and in the pool's leases together. ZADD XX: a worker
 * already declared dead is out of the leases and stays out. ARGV[3] is the
 * problem, set when ARGV[4] is "1"; ARGV[5], when present, its warm pools,
 * and ARGV[6] those with a sandbox ready, as placement reads them. */
static struct rscript renew_script = {
    "worker_renew",
    "redis.call('HSET', KEYS[1], 'lease_until', ARGV[2])\n"
    "if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'problem', ARGV[3]) end\n"
    "if ARGV[5] then redis.call('HSET', KEYS[1], 'warm_json', ARGV[5], 'warm_ready', ARGV[6]) end\n"
    "redis.call('ZADD', KEYS[2], 'XX', ARGV[2], ARGV[1])\n"
    "return 1\n",
    ""};

int worker_renew(struct rconn *rc, const char *pool, const char *wid, long long lease_until,
                 const char *problem, const char *warm_json, const char *warm_ready)
{
    char wkey[160], leases[128], lease[24];
    const char *argv[8] = {wkey,
                           leases,
                           wid,
                           lease,
                           problem ? problem : "",
                           problem ? "1" : "0",
                           warm_json,
                           warm_ready ? warm_ready : ","};
    redisReply *r;

    worker_key(wkey, sizeof(wkey), pool, wid);
    snprintf(leases, sizeof(leases), K_LEASES, pool);
    snprintf(lease, sizeof(lease), "%lld", lease_until);
    r = rconn_eval(rc, &renew_script, 2, warm_json ? 6 : 4, argv);
    return done(r, r ? 0 : -1);
}

long long worker_poll_ticket(struct rconn *rc, const char *pool, const char *wid)
{
    char key[160];
    redisReply *r;
    long long seq;

    worker_key(key, sizeof(key), pool, wid);
    r = rconn_cmd(rc, 0, "HINCRBY %s poll_seq 1", key);
    seq = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    done(r, 0);
    return seq;
}

int worker_is_alive(struct rconn *rc, const char *pool, const char *wid)
{
    char key[160];
    redisReply *r;

    worker_key(key, sizeof(key), pool, wid);
    r = rconn_cmd(rc, 0, "HGET %s state", key);
    if (!r)
        return -1;
    return done(r, state_is_alive(reply_str(r)));
}

/* Check and mark in one step, so that of a sweep and a DELETE (or two
 * corral-sched copies) only one goes on to place the worker's sandboxes again. */
static struct rscript claim_script = {
    "worker_claim_death",
    "local w = redis.call('HMGET', KEYS[1], 'state', 'lease_until')\n"
    "if w[1] ~= 'alive' then return 0 end\n"
    "if ARGV[3] ~= '1' and tonumber(w[2]) > tonumber(ARGV[2]) then return 0 end\n"
    "redis.call('HSET', KEYS[1], 'state', 'dead')\n"
    "redis.call('ZREM', KEYS[2], ARGV[1])\n"
    "redis.call('ZREM', KEYS[3], ARGV[1])\n"
    "return 1\n",
    ""};

int worker_claim_death(struct rconn *rc, const char *pool, const char *wid, long long now_ms,
                       int force)
{
    char wkey[160], zkey[128], lkey[128], now[24];
    const char *argv[6] = {wkey, zkey, lkey, wid, now, force ? "1" : "0"};
    redisReply *r;

    worker_key(wkey, sizeof(wkey), pool, wid);
    snprintf(zkey, sizeof(zkey), K_WORKERS, pool);
    snprintf(lkey, sizeof(lkey), K_LEASES, pool);
    snprintf(now, sizeof(now), "%lld", now_ms);
    r = rconn_eval(rc, &claim_script, 3, 3, argv);
    if (!r)
        return -1;
    return done(r, (int)reply_int(r, 0));
}

/* The string members of an array reply as ids; -1 when it is no array. */
static int ids_of(const redisReply *r, struct worker_ids *out)
{
    out->n = 0;
    out->id = NULL;
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return -1;
    out->id = calloc(r->elements ? r->elements : 1, sizeof(*out->id));
    if (!out->id)
        return -1;
    for (size_t i = 0; i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING)
            snprintf(out->id[out->n++], sizeof(out->id[0]), "%s", r->element[i]->str);
    return 0;
}

int worker_expired(struct rconn *rc, const char *pool, long long now_ms, struct worker_ids *out)
{
    char key[128];
    redisReply *r;

    snprintf(key, sizeof(key), K_LEASES, pool);
    r = rconn_cmd(rc, 0, "ZRANGEBYSCORE %s -inf %lld LIMIT 0 100", key, now_ms);
    return done(r, ids_of(r, out));
}

int worker_ids_all(struct rconn *rc, const char *pool, struct worker_ids *out)
{
    char key[128];
    redisReply *r;

    snprintf(key, sizeof(key), K_WORKERS_ALL, pool);
    r = rconn_cmd(rc, 0, "SMEMBERS %s", key);
    return done(r, ids_of(r, out));
}

static void sbs_key(char *out, size_t len, const char *pool, const char *wid)
{
    snprintf(out, len, K_WORKER_SBS, pool, wid);
}

/* An HGETALL reply of the map, [sbid, value, ...], decoded. */
static int read_sandboxes(const redisReply *r, struct worker_sandboxes *out)
{
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return -1;
    out->v = calloc(r->elements / 2 + 1, sizeof(*out->v));
    if (!out->v)
        return -1;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        struct worker_sandbox *e = &out->v[out->n];
        if (r->element[i]->type != REDIS_REPLY_STRING ||
            r->element[i + 1]->type != REDIS_REPLY_STRING ||
            strlen(r->element[i]->str) >= sizeof(e->sbid))
            continue;
        snprintf(e->sbid, sizeof(e->sbid), "%s", r->element[i]->str);
        e->valid = worker_slot_decode(r->element[i + 1]->str, &e->slot) == 0;
        out->n++;
    }
    return 0;
}

int worker_sandboxes(struct rconn *rc, const char *pool, const char *wid,
                     struct worker_sandboxes *out)
{
    char key[192];
    redisReply *r;

    out->n = 0;
    out->v = NULL;
    sbs_key(key, sizeof(key), pool, wid);
    r = rconn_cmd(rc, 0, "HGETALL %s", key);
    return done(r, read_sandboxes(r, out));
}

void worker_sandboxes_free(struct worker_sandboxes *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

int worker_slot_get(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                    struct worker_slot *out)
{
    char key[192];
    redisReply *r;

    memset(out, 0, sizeof(*out));
    sbs_key(key, sizeof(key), pool, wid);
    r = rconn_cmd(rc, 0, "HGET %s %s", key, sbid);
    if (!r)
        return -1;
    return done(r, reply_str(r) && worker_slot_decode(reply_str(r), out) == 0);
}

int worker_slot_forget(struct rconn *rc, const char *pool, const char *wid, const char *sbid)
{
    char key[192];
    redisReply *r;

    sbs_key(key, sizeof(key), pool, wid);
    r = rconn_cmd(rc, 0, "HDEL %s %s", key, sbid);
    return done(r, r ? 0 : -1);
}

void worker_ids_free(struct worker_ids *ids)
{
    free(ids->id);
    ids->id = NULL;
    ids->n = 0;
}

static void copy_field(const redisReply *rec, const char *name, char *out, size_t len)
{
    const char *v = reply_hget(rec, name);

    snprintf(out, len, "%s", v ? v : "");
}

static double num_field(const redisReply *rec, const char *name)
{
    const char *v = reply_hget(rec, name);

    return v ? atof(v) : 0;
}

static void read_worker(const redisReply *rec, const char *wid, struct worker *w)
{
    char egress[4];

    memset(w, 0, sizeof(*w));
    snprintf(w->wid, sizeof(w->wid), "%s", wid);
    copy_field(rec, "state", w->state, sizeof(w->state));
    copy_field(rec, "hostname", w->hostname, sizeof(w->hostname));
    copy_field(rec, "runtimes_json", w->runtimes_json, sizeof(w->runtimes_json));
    copy_field(rec, "templates_json", w->templates_json, sizeof(w->templates_json));
    copy_field(rec, "data_addr", w->data_addr, sizeof(w->data_addr));
    copy_field(rec, "problem", w->problem, sizeof(w->problem));
    copy_field(rec, "warm_json", w->warm_json, sizeof(w->warm_json));
    copy_field(rec, "egress", egress, sizeof(egress));
    w->egress = strcmp(egress, "1") == 0;
    w->slots = (long)num_field(rec, "slots");
    w->used = (long)num_field(rec, "used");
    w->mem = (long)num_field(rec, "mem");
    w->mem_used = (long)num_field(rec, "mem_used");
    w->cpu = num_field(rec, "cpu");
    w->cpu_used = num_field(rec, "cpu_used");
    w->lease_until = (long long)num_field(rec, "lease_until");
}

/* Each worker's hash; one that is gone by now (deleted meanwhile) is skipped. */
static int read_workers(struct rconn *rc, const char *pool, const struct worker_ids *ids,
                        struct worker_list *out)
{
    char key[160];
    redisReply *rec;

    out->w = calloc(ids->n ? ids->n : 1, sizeof(*out->w));
    if (!out->w)
        return -1;
    for (size_t i = 0; i < ids->n; i++) {
        worker_key(key, sizeof(key), pool, ids->id[i]);
        rec = rconn_cmd(rc, 0, "HGETALL %s", key);
        if (!rec)
            return -1;
        if (rec->type == REDIS_REPLY_ARRAY && rec->elements > 0)
            read_worker(rec, ids->id[i], &out->w[out->n++]);
        freeReplyObject(rec);
    }
    return 0;
}

int worker_list(struct rconn *rc, const char *pool, enum worker_which which,
                struct worker_list *out)
{
    char key[128];
    struct worker_ids ids;
    redisReply *r;
    int rv;

    out->n = 0;
    out->w = NULL;
    snprintf(key, sizeof(key), which == WORKERS_ALL ? K_WORKERS_ALL : K_WORKERS, pool);
    r = which == WORKERS_ALL ? rconn_cmd(rc, 0, "SMEMBERS %s", key)
                             : rconn_cmd(rc, 0, "ZRANGE %s 0 -1", key);
    rv = done(r, ids_of(r, &ids));
    if (rv == 0)
        rv = read_workers(rc, pool, &ids, out);
    worker_ids_free(&ids);
    if (rv != 0)
        worker_list_free(out);
    return rv;
}

void worker_list_free(struct worker_list *l)
{
    free(l->w);
    l->w = NULL;
    l->n = 0;
}

/* Adds the names in one worker's templates_json to seen. */
static void add_templates(const struct worker *w, json_t *seen)
{
    json_t *list = json_loads(w->templates_json, 0, NULL), *v;
    size_t i;

    json_array_foreach(list, i, v)
    {
        if (json_is_string(v))
            json_object_set(seen, json_string_value(v), json_true());
    }
    json_decref(list);
}

json_t *worker_templates_offered(struct rconn *rc, const char *ws)
{
    const char *pools[2] = {ws, ""};
    json_t *seen = json_object();

    for (int p = 0; seen && p < (*ws ? 2 : 1); p++) {
        struct worker_list l;
        if (worker_list(rc, pools[p], WORKERS_LIVE, &l) != 0)
            continue;
        for (size_t i = 0; i < l.n; i++)
            add_templates(&l.w[i], seen);
        worker_list_free(&l);
    }
    return seen;
}

/* A pool's free capacity in one script, so the totals are of one moment.
 * ARGV[1] is the pool's worker key prefix (the layout stays in keys.h). The
 * cpu goes back as text: Lua numbers become integers in a Redis reply. */
static struct rscript pool_free_script = {
    "worker_pool_free",
    "local n, s, c, m = 0, 0, 0, 0\n"
    "local function num(x) return tonumber(x) or 0 end\n"
    "for _, w in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do\n"
    "  local v = redis.call('HMGET', ARGV[1] .. w, 'slots', 'used', 'cpu', 'cpu_used', 'mem',\n"
    "    'mem_used')\n"
    "  n = n + 1\n"
    "  s = s + math.max(0, num(v[1]) - num(v[2]))\n"
    "  c = c + math.max(0, num(v[3]) - num(v[4]))\n"
    "  m = m + math.max(0, num(v[5]) - num(v[6]))\n"
    "end\n"
    "return {n, s, string.format('%.3f', c), m}\n",
    ""};

int worker_pool_free(struct rconn *rc, const char *pool, struct worker_free *out)
{
    char zkey[128], prefix[128];
    const char *argv[2] = {zkey, prefix};
    redisReply *r;

    snprintf(zkey, sizeof(zkey), K_WORKERS, pool);
    worker_key_prefix(prefix, sizeof(prefix), pool);
    r = rconn_eval(rc, &pool_free_script, 1, 1, argv);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 4 ||
        r->element[2]->type != REDIS_REPLY_STRING)
        return done(r, -1);
    out->alive = (long)r->element[0]->integer;
    out->slots = (long)r->element[1]->integer;
    out->cpu_cores = atof(r->element[2]->str);
    out->memory_mb = (long)r->element[3]->integer;
    return done(r, 0);
}

int worker_unlist(struct rconn *rc, const char *pool, const char *wid)
{
    char key[128];
    redisReply *r;

    snprintf(key, sizeof(key), K_WORKERS_ALL, pool);
    r = rconn_cmd(rc, 0, "SREM %s %s", key, wid);
    if (!r)
        return -1;
    return done(r, reply_int(r, 0) == 1);
}

int worker_erase(struct rconn *rc, const char *pool, const char *wid)
{
    char key[160];

    redisReply *r;

    worker_key(key, sizeof(key), pool, wid);
    r = rconn_cmd(rc, 0, "DEL %s", key);
    return done(r, r ? 0 : -1);
}

int worker_route(struct rconn *rc, const char *pool, const char *wid, struct worker_route *out)
{
    char key[160];
    const char *addr, *dkey, *state;
    redisReply *r;

    worker_key(key, sizeof(key), pool, wid);
    r = rconn_cmd(rc, 0, "HMGET %s data_addr data_key state", key);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 3)
        return done(r, -1);
    addr = reply_str(r->element[0]);
    dkey = reply_str(r->element[1]);
    state = reply_str(r->element[2]);
    if (!addr || !dkey || !state_is_alive(state))
        return done(r, 0);
    snprintf(out->data_addr, sizeof(out->data_addr), "%s", addr);
    snprintf(out->data_key, sizeof(out->data_key), "%s", dkey);
    freeReplyObject(r);
    /* A tunnelled worker is reached at the daemon holding its tunnel; with
     * none, data_addr stays the marker: alive, not reachable now. */
    out->tunnel = strcmp(out->data_addr, TUNNEL_DATA_ADDR) == 0;
    if (out->tunnel && tunnel_record_get(rc, pool, wid, out->data_addr, sizeof(out->data_addr)) < 0)
        return -1;
    return 1;
}
