#include "telemetry.h"

#include "keys.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* KEYS: metrics, logs. ARGV: metric ms, metric ("" none), metrics cap, logs
 * cap, ttl ms, the lines as one JSON array of [ms, line] (a script takes a
 * bounded number of arguments, a push up to hundreds of lines). Trimming by
 * rank keeps the newest. */
static struct rscript write_script = {
    "telemetry_write",
    "if ARGV[2] ~= '' then\n"
    "  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])\n"
    "  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -tonumber(ARGV[3]) - 1)\n"
    "end\n"
    "local lines = cjson.decode(ARGV[6])\n"
    "for _, l in ipairs(lines) do redis.call('ZADD', KEYS[2], l[1], l[2]) end\n"
    "if #lines > 0 then\n"
    "  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[4]) - 1)\n"
    "end\n"
    "redis.call('PEXPIRE', KEYS[1], ARGV[5])\n"
    "redis.call('PEXPIRE', KEYS[2], ARGV[5])\n"
    "return 1\n",
    ""};

void telemetry_keys(const char *ws, const char *sbid, char *metrics, char *logs, size_t len)
{
    snprintf(metrics, len, K_SB_METRICS, ws, sbid);
    snprintf(logs, len, K_SB_LOGS, ws, sbid);
}

static char *lines_json(const struct telemetry_push *p)
{
    json_t *a = json_array();
    char *text;

    for (size_t i = 0; a && i < p->nlogs; i++)
        json_array_append_new(a, json_pack("[I, s]", (json_int_t)p->log_ms[i], p->logs[i]));
    text = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return text;
}

int telemetry_write(struct rconn *rc, const char *ws, const char *sbid,
                    const struct telemetry_push *p)
{
    char k_m[192], k_l[192], m_ms[24], m_cap[16], l_cap[16], ttl[24];
    char *lines = lines_json(p);
    redisReply *r;

    if (!lines)
        return -1;
    telemetry_keys(ws, sbid, k_m, k_l, sizeof(k_m));
    snprintf(m_ms, sizeof(m_ms), "%lld", p->metric_ms);
    snprintf(m_cap, sizeof(m_cap), "%d", TELEMETRY_METRICS_MAX);
    snprintf(l_cap, sizeof(l_cap), "%d", TELEMETRY_LOGS_MAX);
    snprintf(ttl, sizeof(ttl), "%lld", TELEMETRY_TTL_MS);
    const char *argv[8] = {k_m, k_l, m_ms, p->metric ? p->metric : "", m_cap, l_cap, ttl, lines};
    r = rconn_eval(rc, &write_script, 2, 6, argv);
    free(lines);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

static int to_list(redisReply *r, struct telemetry_list *out)
{
    memset(out, 0, sizeof(*out));
    if (!r)
        return -1;
    if (r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        return -1;
    }
    out->owned = r;
    if (r->elements == 0)
        return 0;
    out->items = calloc(r->elements, sizeof(*out->items));
    if (!out->items) {
        telemetry_list_free(out);
        return -1;
    }
    for (size_t i = 0; i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING)
            out->items[out->n++] = r->element[i]->str;
    return 0;
}

static int range(struct rconn *rc, const char *fmt, const char *ws, const char *sbid,
                 long long from_ms, long long to_ms, struct telemetry_list *out)
{
    char key[192];

    snprintf(key, sizeof(key), fmt, ws, sbid);
    return to_list(rconn_cmd(rc, 0, "ZRANGEBYSCORE %s %lld %lld", key, from_ms, to_ms), out);
}

int telemetry_metrics(struct rconn *rc, const char *ws, const char *sbid, long long from_ms,
                      long long to_ms, struct telemetry_list *out)
{
    return range(rc, K_SB_METRICS, ws, sbid, from_ms, to_ms, out);
}

int telemetry_logs(struct rconn *rc, const char *ws, const char *sbid, long long from_ms,
                   long long to_ms, struct telemetry_list *out)
{
    return range(rc, K_SB_LOGS, ws, sbid, from_ms, to_ms, out);
}

int telemetry_latest_metric(struct rconn *rc, const char *ws, const char *sbid,
                            struct telemetry_list *out)
{
    char key[192];

    snprintf(key, sizeof(key), K_SB_METRICS, ws, sbid);
    return to_list(rconn_cmd(rc, 0, "ZRANGE %s -1 -1", key), out);
}

void telemetry_list_free(struct telemetry_list *l)
{
    free(l->items);
    if (l->owned)
        freeReplyObject(l->owned);
    memset(l, 0, sizeof(*l));
}
