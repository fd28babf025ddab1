#include "telemetry_view.h"

#include "sandbox_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_fields[] = {"cpu_count", "mem_used",  "mem_total",
                                            "mem_cache", "disk_used", "disk_total"};
static const char *const metric_e2b[] = {"cpuCount", "memUsed",  "memTotal",
                                         "memCache", "diskUsed", "diskTotal"};
#define N_COUNTS (sizeof(metric_fields) / sizeof(metric_fields[0]))

static char *fail(char *err, size_t errlen, const char *field, const char *rule)
{
    snprintf(err, errlen, "%s: %s", field, rule);
    return NULL;
}

static int in_window(long long ms, long long now_ms)
{
    return ms >= now_ms - TELEMETRY_PAST_MS && ms <= now_ms + TELEMETRY_SKEW_MS;
}

static char *dump(json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    return text;
}

char *telemetry_metric_in(const json_t *m, long long now_ms, long long *ts_ms, char *err,
                          size_t errlen)
{
    const json_t *ts = json_object_get(m, "ts_ms"), *pct = json_object_get(m, "cpu_used_pct");
    json_t *out;

    if (!json_is_object(m))
        return fail(err, errlen, "metric", "must be an object");
    if (!json_is_integer(ts) || !in_window(json_integer_value(ts), now_ms))
        return fail(err, errlen, "metric.ts_ms",
                    "must be ms since the epoch, within the last hour");
    if (!json_is_number(pct) || !isfinite(json_number_value(pct)) || json_number_value(pct) < 0 ||
        json_number_value(pct) > 100)
        return fail(err, errlen, "metric.cpu_used_pct", "must be a number in [0, 100]");
    *ts_ms = json_integer_value(ts);
    out = json_pack("{s:I, s:f}", "ts", (json_int_t)*ts_ms, "cpuUsedPct",
                    round(json_number_value(pct) * 100) / 100);
    for (size_t i = 0; i < N_COUNTS; i++) {
        const json_t *v = json_object_get(m, metric_fields[i]);
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            json_decref(out);
            snprintf(err, errlen, "metric.%s: must be an integer >= 0", metric_fields[i]);
            return NULL;
        }
        json_object_set_new(out, metric_e2b[i], json_integer(json_integer_value(v)));
    }
    return dump(out);
}

/* The length of text cut to at most max bytes without splitting a UTF-8
 * sequence (jansson strings are valid UTF-8). */
static size_t utf8_cut(const char *text, size_t len, size_t max)
{
    if (len <= max)
        return len;
    while (max > 0 && ((unsigned char)text[max] & 0xC0) == 0x80)
        max--;
    return max;
}

char *telemetry_log_in(const json_t *l, long long now_ms, long long *ts_ms, char *err,
                       size_t errlen)
{
    const json_t *ns = json_object_get(l, "ts_ns"), *line = json_object_get(l, "line");
    size_t len;

    if (!json_is_object(l))
        return fail(err, errlen, "", "must be an object {ts_ns, line}");
    if (!json_is_integer(ns) || !in_window(json_integer_value(ns) / 1000000, now_ms))
        return fail(err, errlen, ".ts_ns", "must be ns since the epoch, within the last hour");
    if (!json_is_string(line))
        return fail(err, errlen, ".line", "must be a string");
    *ts_ms = json_integer_value(ns) / 1000000;
    len = utf8_cut(json_string_value(line), json_string_length(line), TELEMETRY_LINE_MAX);
    /* ns keeps two equal lines of one millisecond apart in the sorted set. */
    return dump(json_pack("{s:I, s:s%}", "ns", json_integer_value(ns), "line",
                          json_string_value(line), len));
}

static json_t *metric_sample(const char *stored, long long *ms)
{
    json_t *s = json_loads(stored, 0, NULL);

    if (!json_is_integer(json_object_get(s, "ts"))) {
        json_decref(s);
        return NULL;
    }
    *ms = json_integer_value(json_object_get(s, "ts"));
    return s;
}

json_t *telemetry_metric_e2b(const char *stored)
{
    long long ms;
    json_t *s = metric_sample(stored, &ms), *o;

    if (!s)
        return NULL;
    o = json_pack("{s:o, s:I, s:O}", "timestamp", format_time_json(ms), "timestampUnix",
                  (json_int_t)(ms / 1000), "cpuUsedPct", json_object_get(s, "cpuUsedPct"));
    for (size_t i = 0; o && i < N_COUNTS; i++)
        json_object_set(o, metric_e2b[i], json_object_get(s, metric_e2b[i]));
    json_decref(s);
    return o;
}

json_t *telemetry_metric_native(const char *stored)
{
    long long ms;
    json_t *s = metric_sample(stored, &ms), *o;

    if (!s)
        return NULL;
    o = json_pack("{s:o, s:I, s:O}", "time", format_time_json(ms), "time_ms", (json_int_t)ms,
                  "cpu_used_pct", json_object_get(s, "cpuUsedPct"));
    for (size_t i = 0; o && i < N_COUNTS; i++)
        json_object_set(o, metric_fields[i], json_object_get(s, metric_e2b[i]));
    json_decref(s);
    return o;
}

static json_t *log_stored(const char *stored, long long *ms)
{
    json_t *s = json_loads(stored, 0, NULL);

    if (!json_is_integer(json_object_get(s, "ns")) || !json_is_string(json_object_get(s, "line"))) {
        json_decref(s);
        return NULL;
    }
    *ms = json_integer_value(json_object_get(s, "ns")) / 1000000;
    return s;
}

json_t *telemetry_log_line(const char *stored)
{
    long long ms;
    json_t *s = log_stored(stored, &ms), *o;

    if (!s)
        return NULL;
    o = json_pack("{s:o, s:O}", "timestamp", format_time_json(ms), "line",
                  json_object_get(s, "line"));
    json_decref(s);
    return o;
}

int telemetry_level_rank(const char *level)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};

    for (int i = 0; level && i < 4; i++)
        if (strcmp(level, names[i]) == 0)
            return i;
    return -1;
}

/* A structured line's keys but its level, message and time, as strings. */
static json_t *fields_of(json_t *obj)
{
    json_t *fields = json_object(), *v;
    const char *k;

    json_object_foreach(obj, k, v)
    {
        char num[48];
        if (!strcmp(k, "level") || !strcmp(k, "message") || !strcmp(k, "msg") ||
            !strcmp(k, "time") || !strcmp(k, "timestamp"))
            continue;
        if (json_is_string(v))
            json_object_set(fields, k, v);
        else if (json_is_integer(v) &&
                 snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v)) > 0)
            json_object_set_new(fields, k, json_string(num));
        else if (json_is_boolean(v))
            json_object_set_new(fields, k, json_string(json_is_true(v) ? "true" : "false"));
    }
    return fields;
}

json_t *telemetry_log_entry(const char *stored)
{
    long long ms;
    json_t *s = log_stored(stored, &ms), *line, *o;
    const char *text, *level, *msg;

    if (!s)
        return NULL;
    text = json_string_value(json_object_get(s, "line"));
    line = text[0] == '{' ? json_loads(text, 0, NULL) : NULL;
    level = json_string_value(json_object_get(line, "level"));
    msg = json_string_value(json_object_get(line, "message"));
    if (!msg)
        msg = json_string_value(json_object_get(line, "msg"));
    if (json_is_object(line) && msg)
        o = json_pack("{s:o, s:s, s:s, s:o}", "timestamp", format_time_json(ms), "level",
                      telemetry_level_rank(level) >= 0 ? level : "info", "message", msg, "fields",
                      fields_of(line));
    else
        o = json_pack("{s:o, s:s, s:s, s:{}}", "timestamp", format_time_json(ms), "level", "info",
                      "message", text, "fields");
    json_decref(line);
    json_decref(s);
    return o;
}
