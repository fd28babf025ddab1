#include "sandbox_view.h"

#include "egress_seal.h"

#include <stdio.h>
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

json_t *format_time_json(int64_t ms)
{
    char text[40];

    format_time_ms(ms, text, sizeof(text));
    return json_string(text);
}

static json_t *time_or_null(long long ms)
{
    char text[40];

    if (!ms)
        return json_null();
    format_time_ms(ms, text, sizeof(text));
    return json_string(text);
}

static json_t *str_or_null(const char *v)
{
    return *v ? json_string(v) : json_null();
}

/* The stored policy as shown: its secrets masked, sealed or not. */
json_t *sandbox_egress_json(const char *policy)
{
    json_t *j = policy && *policy ? json_loads(policy, 0, NULL) : NULL;

    if (json_is_object(j))
        egress_mask(j);
    return j ? j : json_null();
}

static json_t *int_or_null(long v)
{
    return v ? json_integer(v) : json_null();
}

/* The policy in force, one recorded for the next start (if any), the limits. */
static void add_isolation(json_t *o, const struct sandbox_record *r)
{
    json_object_set_new(o, "secure", json_boolean(r->secure));
    json_object_set_new(o, "egress", sandbox_egress_json(r->egress));
    json_object_set_new(o, "egress_next",
                        r->egress_next
                            ? json_pack("{s:o, s:s}", "egress", sandbox_egress_json(r->egress_next),
                                        "applies", "next_start")
                            : json_null());
    json_object_set_new(o, "pids_limit", int_or_null(r->pids_limit));
    json_object_set_new(o, "disk_mb", int_or_null(r->disk_mb));
    json_object_set_new(o, "on_timeout", json_string(r->pause_on_timeout ? "pause" : "kill"));
    json_object_set_new(o, "auto_resume", json_boolean(r->auto_resume));
    json_object_set_new(o, "keep_memory", json_boolean(r->keep_memory));
    /* Only while paused (or on the way): what that pause kept (decision 0074). */
    json_object_set_new(o, "paused_memory",
                        sandbox_is_paused(r) || r->state == SANDBOX_STATE_RESUMING
                            ? json_boolean(r->paused_memory)
                            : json_null());
}

json_t *sandbox_view(const struct sandbox_record *r)
{
    json_t *o =
        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:I, s:I, s:o, s:o, s:o, s:o, "
                  "s:o, s:o}",
                  "sandbox_id", str_or_null(r->id), "template", str_or_null(r->template_id),
                  "state", str_or_null(sandbox_state_shown(r)), "isolation", str_or_null(r->tier),
                  "runtime", str_or_null(r->runtime), "require_isolation",
                  str_or_null(r->require_isolation), "worker_id", str_or_null(r->worker),
                  "cpu_cores", r->cpu_cores, "memory_mb", (json_int_t)r->memory_mb, "timeout",
                  (json_int_t)r->timeout_s, "metadata", sandbox_json_field(r->metadata, "{}"),
                  "allowed_domains", sandbox_json_field(r->allowed_domains, "[]"), "created_at",
                  time_or_null(r->created_at), "started_at", time_or_null(r->started_at),
                  "expires_at", time_or_null(r->expires_at), "reason", str_or_null(r->reason));

    if (o)
        add_isolation(o, r);
    return o;
}
