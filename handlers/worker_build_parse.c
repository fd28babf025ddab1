/* worker_build_parse.c: a worker's build report, checked at the edge: what a
 * compromised worker sends is bounded here before it reaches a build's log. */
#include "worker_build_parse.h"

#include <stdio.h>
#include <string.h>

static const char *const levels[] = {"debug", "info", "warn", "error"};

static int level_ok(const char *s)
{
    for (size_t i = 0; s && i < sizeof(levels) / sizeof(*levels); i++)
        if (strcmp(s, levels[i]) == 0)
            return 1;
    return 0;
}

static int string_max(json_t *v, size_t max)
{
    return json_is_string(v) && json_string_length(v) <= max &&
           strlen(json_string_value(v)) == json_string_length(v);
}

static const char *entry_check(json_t *e)
{
    json_t *step = json_object_get(e, "step");

    if (!json_is_object(e) || !string_max(json_object_get(e, "timestamp"), 40))
        return "needs a timestamp";
    if (!level_ok(json_string_value(json_object_get(e, "level"))))
        return "level: must be debug, info, warn or error";
    if (!string_max(json_object_get(e, "message"), 8192))
        return "message: a string of at most 8192 bytes";
    if (step && !string_max(step, 15))
        return "step: a string of at most 15 bytes";
    return NULL;
}

static int logs_check(json_t *logs, struct worker_build_report *out, char *err, size_t errlen)
{
    size_t i;
    json_t *e, *kept = json_array();

    if (logs && (!json_is_array(logs) || json_array_size(logs) > WORKER_BUILD_LOGS_MAX)) {
        snprintf(err, errlen, "logs: must be an array of at most %d entries",
                 WORKER_BUILD_LOGS_MAX);
        json_decref(kept);
        return -1;
    }
    json_array_foreach(logs, i, e)
    {
        const char *why = entry_check(e);
        if (why) {
            snprintf(err, errlen, "logs[%zu]: %s", i, why);
            json_decref(kept);
            return -1;
        }
        /* Only the known fields go on: the log is the tenant's to read. */
        json_array_append_new(kept, json_pack("{s:O, s:O, s:O}", "timestamp",
                                              json_object_get(e, "timestamp"), "level",
                                              json_object_get(e, "level"), "message",
                                              json_object_get(e, "message")));
    }
    out->logs = kept;
    return 0;
}

static int text(json_t *body, const char *name, char *out, size_t len, char *err, size_t errlen)
{
    json_t *v = json_object_get(body, name);

    if (!v)
        return 0;
    if (!string_max(v, len - 1)) {
        snprintf(err, errlen, "%s: a string of at most %zu bytes", name, len - 1);
        return -1;
    }
    snprintf(out, len, "%s", json_string_value(v));
    return 0;
}

static int state_check(json_t *body, struct worker_build_report *out, char *err, size_t errlen)
{
    const char *st = json_string_value(json_object_get(body, "state"));

    if (!json_object_get(body, "state") || (st && strcmp(st, "building") == 0))
        return 0;
    if (st && strcmp(st, "ready") == 0) {
        out->ends = 1;
        if (strncmp(out->digest, "sha256:", 7) != 0 || strlen(out->digest) != 71 ||
            strspn(out->digest + 7, "0123456789abcdef") != 64) {
            snprintf(err, errlen, "digest: a ready build needs the pushed image's sha256 digest");
            return -1;
        }
        return 0;
    }
    if (st && strcmp(st, "error") == 0) {
        out->ends = 2;
        return 0;
    }
    snprintf(err, errlen, "state: must be building, ready or error");
    return -1;
}

/* Optional: a worker that could not measure it says nothing. */
static int size_check(json_t *body, struct worker_build_report *out, char *err, size_t errlen)
{
    json_t *v = json_object_get(body, "size_bytes");

    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) > WORKER_BUILD_SIZE_MAX) {
        snprintf(err, errlen, "size_bytes: must be a whole number of bytes, 0 to 2^50");
        return -1;
    }
    out->size_bytes = json_integer_value(v);
    return 0;
}

int worker_build_parse(json_t *body, struct worker_build_report *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (text(body, "step", out->step, sizeof(out->step), err, errlen) ||
        text(body, "reason", out->reason, sizeof(out->reason), err, errlen) ||
        text(body, "digest", out->digest, sizeof(out->digest), err, errlen) ||
        state_check(body, out, err, errlen) || size_check(body, out, err, errlen))
        return -1;
    return logs_check(json_object_get(body, "logs"), out, err, errlen);
}

int worker_build_image(const char *target, const char *digest, char *out, size_t len)
{
    const char *slash = strrchr(target, '/'), *colon = slash ? strrchr(slash, ':') : NULL;
    int n;

    if (!colon)
        return -1;
    n = snprintf(out, len, "%.*s@%s", (int)(colon - target), target, digest);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
