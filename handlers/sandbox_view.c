#include "sandbox_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void format_time_ms(int64_t ms, char *out, size_t outlen)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    char base[32];

    gmtime_r(&s, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, outlen, "%s.%03dZ", base, (int)(ms % 1000));
}

static json_t *time_field(const redisReply *rec, const char *field)
{
    const char *v = reply_hget(rec, field);
    char text[40];

    if (!v || !*v)
        return json_null();
    format_time_ms(atoll(v), text, sizeof(text));
    return json_string(text);
}

static json_t *json_field(const redisReply *rec, const char *field, const char *dflt)
{
    const char *v = reply_hget(rec, field);
    json_t *j = json_loads(v ? v : dflt, 0, NULL);
    return j ? j : json_loads(dflt, 0, NULL);
}

static json_t *str_or_null(const redisReply *rec, const char *field)
{
    const char *v = reply_hget(rec, field);
    return v && *v ? json_string(v) : json_null();
}

json_t *sandbox_egress_field(const redisReply *rec, const char *field)
{
    const char *v = reply_hget(rec, field);
    json_t *j = v && *v ? json_loads(v, 0, NULL) : NULL;

    return j ? j : json_null();
}

static json_t *int_or_null(const redisReply *rec, const char *field)
{
    const char *v = reply_hget(rec, field);
    return v && *v ? json_integer(atoll(v)) : json_null();
}

/* The policy in force, one recorded for the next start (if any), the limits. */
static void add_isolation(json_t *o, const redisReply *rec)
{
    const char *secure = reply_hget(rec, "secure");

    json_object_set_new(o, "secure", json_boolean(secure && strcmp(secure, "1") == 0));
    json_object_set_new(o, "egress", sandbox_egress_field(rec, "egress"));
    json_object_set_new(o, "egress_next",
                        reply_hget(rec, "egress_next")
                            ? json_pack("{s:o, s:s}", "egress",
                                        sandbox_egress_field(rec, "egress_next"), "applies",
                                        "next_start")
                            : json_null());
    json_object_set_new(o, "pids_limit", int_or_null(rec, "pids_limit"));
    json_object_set_new(o, "disk_mb", int_or_null(rec, "disk_mb"));
}

json_t *sandbox_view(const redisReply *rec)
{
    const char *cpu = reply_hget(rec, "cpu_cores"), *mem = reply_hget(rec, "memory_mb");
    const char *timeout = reply_hget(rec, "timeout");
    json_t *o = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:I, s:I, s:o, s:o, s:o, s:o, "
        "s:o, s:o}",
        "sandbox_id", str_or_null(rec, "id"), "template", str_or_null(rec, "template"), "state",
        str_or_null(rec, "state"), "isolation", str_or_null(rec, "tier"), "runtime",
        str_or_null(rec, "runtime"), "require_isolation", str_or_null(rec, "require_isolation"),
        "worker_id", str_or_null(rec, "worker"), "cpu_cores", cpu ? atof(cpu) : 0.0, "memory_mb",
        (json_int_t)(mem ? atoll(mem) : 0), "timeout", (json_int_t)(timeout ? atoll(timeout) : 0),
        "metadata", json_field(rec, "metadata", "{}"), "allowed_domains",
        json_field(rec, "allowed_domains", "[]"), "created_at", time_field(rec, "created_at"),
        "started_at", time_field(rec, "started_at"), "expires_at", time_field(rec, "expires_at"),
        "reason", str_or_null(rec, "reason"));

    if (o)
        add_isolation(o, rec);
    return o;
}
