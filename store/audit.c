#include "audit.h"

#include "clock.h"
#include "corral_conf.h"
#include "keys.h"
#include "log.h"
#include "sandbox_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long retention_s = AUDIT_RETENTION_DEFAULT_S;

void audit_set_retention(long seconds)
{
    retention_s = seconds;
}

long audit_retention_ms(void)
{
    return retention_s * 1000;
}

/* The oldest id still kept: everything before it is past the retention. */
static long long floor_ms(void)
{
    return (long long)clock_now_ms() - audit_retention_ms();
}

void audit_actor_key(char *out, const char *key_id)
{
    snprintf(out, AUDIT_ACTOR_MAX, "key:%s", key_id);
}

void audit_actor_worker(char *out, const char *wid)
{
    snprintf(out, AUDIT_ACTOR_MAX, "worker:%s", wid);
}

static int add_field(const char **argv, int argc, const char *name, const char *value)
{
    if (!value || !*value)
        return argc;
    argv[argc] = name;
    argv[argc + 1] = value;
    return argc + 2;
}

/* Exact MINID trimming (not "~"): approximate trimming frees only whole
 * stream nodes, so a quiet workspace's few old events would never go. Each
 * append removes only what aged out since the last, so it stays cheap. */
int audit_append(struct rconn *rc, const char *ws, const struct audit_event *e)
{
    char key[128], minid[32];
    const char *argv[20] = {"XADD", key, "MINID", minid, "*"};
    int argc = 5;
    redisReply *r;

    snprintf(key, sizeof(key), K_AUDIT, ws);
    snprintf(minid, sizeof(minid), "%lld", floor_ms());
    argc = add_field(argv, argc, "event", e->event);
    argc = add_field(argv, argc, "actor", e->actor);
    argc = add_field(argv, argc, "sandbox", e->sandbox);
    argc = add_field(argv, argc, "worker", e->worker);
    argc = add_field(argv, argc, "tier", e->tier);
    argc = add_field(argv, argc, "credential", e->credential);
    argc = add_field(argv, argc, "reason", e->reason);
    r = rconn_cmdargv(rc, 0, argc, argv, NULL);
    if (!r) {
        log_warn("audit: event %s of workspace '%s' not recorded: store unavailable", e->event, ws);
        return -1;
    }
    freeReplyObject(r);
    return 0;
}

int audit_sandbox_event(struct rconn *rc, const char *ws, struct audit_event *e)
{
    struct sandbox_record rec;
    int found = sandbox_read(rc, ws, e->sandbox, &rec), rv;

    if (found == 1) {
        e->worker = rec.worker;
        e->tier = rec.tier;
    }
    rv = audit_append(rc, ws, e);
    if (found == 1)
        sandbox_record_free(&rec);
    return rv;
}

int audit_sandbox(struct rconn *rc, const char *ws, const char *sbid, const char *event,
                  const char *actor, const char *reason)
{
    return audit_sandbox_event(
        rc, ws,
        &(struct audit_event){.event = event, .actor = actor, .sandbox = sbid, .reason = reason});
}

int audit_trim(struct rconn *rc, const char *ws)
{
    char key[128];
    redisReply *r;

    snprintf(key, sizeof(key), K_AUDIT, ws);
    r = rconn_cmd(rc, 0, "XTRIM %s MINID %lld", key, floor_ms());
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

int audit_id_parse(const char *s, unsigned long long *ms, unsigned long long *seq)
{
    char *end;

    if (!s || *s < '0' || *s > '9')
        return -1;
    *ms = strtoull(s, &end, 10);
    if (*end != '-' || end[1] < '0' || end[1] > '9' || end - s > 20)
        return -1;
    s = end + 1;
    *seq = strtoull(s, &end, 10);
    return *end == '\0' && end - s <= 20 ? 0 : -1;
}

/* Filters server-side, so a page costs one round trip whatever the filters
 * skip. One match past the limit is looked for: a page ends with next ""
 * only when nothing is left, and a full page's next is the id before the
 * first match it could not hold. The budget bounds the time Redis spends. */
static struct rscript read_script = {
    "audit_read",
    "local start, stop = ARGV[1], ARGV[2]\n"
    "local limit, budget = tonumber(ARGV[3]), tonumber(ARGV[4])\n"
    "local want = {sandbox = ARGV[5], event = ARGV[6], actor = ARGV[7]}\n"
    "local out, last, scanned = {}, '', 0\n"
    "local function matches(f)\n"
    "  local m = {}\n"
    "  for i = 1, #f, 2 do m[f[i]] = f[i + 1] end\n"
    "  for k, v in pairs(want) do\n"
    "    if v ~= '' and m[k] ~= v then return false end\n"
    "  end\n"
    "  return true\n"
    "end\n"
    "while scanned < budget do\n"
    "  local n = math.min(200, budget - scanned)\n"
    "  local batch = redis.call('XRANGE', KEYS[1], start, stop, 'COUNT', n)\n"
    "  for _, e in ipairs(batch) do\n"
    "    if matches(e[2]) then\n"
    "      if #out == limit then return {out, last} end\n"
    "      out[#out + 1] = e\n"
    "    end\n"
    "    last = e[1]\n"
    "    scanned = scanned + 1\n"
    "  end\n"
    "  if #batch < n then return {out, ''} end\n"
    "  start = '(' .. last\n"
    "end\n"
    "return {out, last}\n",
    ""};

/* Where a page starts: after the cursor, but never before since or the
 * retention (an event past it is gone even if no append has trimmed it yet). */
static void page_start(const struct audit_query *q, char *out, size_t outlen)
{
    long long lo = floor_ms();
    unsigned long long ms, seq;

    if (q->since_ms > lo)
        lo = q->since_ms;
    if (*q->after && audit_id_parse(q->after, &ms, &seq) == 0 && (long long)ms >= lo) {
        snprintf(out, outlen, "(%s", q->after);
        return;
    }
    snprintf(out, outlen, "%lld-0", lo < 0 ? 0 : lo);
}

static const char *field_of(const redisReply *f, const char *name)
{
    for (size_t i = 0; i + 1 < f->elements; i += 2)
        if (f->element[i]->type == REDIS_REPLY_STRING && strcmp(f->element[i]->str, name) == 0 &&
            f->element[i + 1]->type == REDIS_REPLY_STRING)
            return f->element[i + 1]->str;
    return "";
}

/* 0, or -1 when the entry is not shaped {id, {field, value, ...}}. */
static int entry_fill(const redisReply *e, struct audit_entry *out)
{
    const redisReply *f;

    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_ARRAY)
        return -1;
    f = e->element[1];
    out->id = e->element[0]->str;
    out->time_ms = clock_stream_id_ms(out->id);
    out->event = field_of(f, "event");
    out->actor = field_of(f, "actor");
    out->sandbox = field_of(f, "sandbox");
    out->worker = field_of(f, "worker");
    out->tier = field_of(f, "tier");
    out->credential = field_of(f, "credential");
    out->reason = field_of(f, "reason");
    return 0;
}

static int page_fill(redisReply *r, struct audit_page *out)
{
    const redisReply *list;

    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_ARRAY || !reply_str(r->element[1]))
        return -1;
    list = r->element[0];
    out->owned = r;
    snprintf(out->next, sizeof(out->next), "%s", reply_str(r->element[1]));
    out->v = calloc(list->elements ? list->elements : 1, sizeof(*out->v));
    if (!out->v)
        return -1;
    for (size_t i = 0; i < list->elements; i++)
        if (entry_fill(list->element[i], &out->v[out->n++]) != 0)
            return -1;
    return 0;
}

int audit_read(struct rconn *rc, const char *ws, const struct audit_query *q,
               struct audit_page *out)
{
    char key[128], start[AUDIT_ID_MAX + 1], stop[32], limit[16], budget[16];
    const char *argv[8] = {key, start, stop, limit, budget, q->sandbox, q->event, q->actor};
    redisReply *r;

    memset(out, 0, sizeof(*out));
    snprintf(key, sizeof(key), K_AUDIT, ws);
    page_start(q, start, sizeof(start));
    if (q->until_ms > 0)
        snprintf(stop, sizeof(stop), "%lld", q->until_ms);
    else
        snprintf(stop, sizeof(stop), "+");
    snprintf(limit, sizeof(limit), "%d", q->limit);
    snprintf(budget, sizeof(budget), "%d", AUDIT_SCAN_MAX);
    r = rconn_eval_unwaited(rc, &read_script, 1, 7, argv);
    if (!r)
        return -1;
    if (page_fill(r, out) != 0) {
        if (!out->owned)
            freeReplyObject(r);
        audit_page_free(out);
        return -1;
    }
    return 0;
}

void audit_page_free(struct audit_page *p)
{
    free(p->v);
    if (p->owned)
        freeReplyObject(p->owned);
    memset(p, 0, sizeof(*p));
}
