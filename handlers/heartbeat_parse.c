/* The body of POST /v1/worker/heartbeat (heartbeat_parse.h). */
#include "heartbeat_parse.h"
#include "sandbox_codec.h"
#include "sandbox_spec_parse.h"
#include "snapshot_store.h"
#include "token.h"

#include <stdio.h>
#include <string.h>

static int valid_stream_id(const char *s)
{
    size_t digits = strspn(s, "0123456789");
    return digits > 0 && digits < 24 && s[digits] == '-' &&
           strspn(s + digits + 1, "0123456789") == strlen(s + digits + 1) && s[digits + 1];
}

static int check_body(const json_t *b, char *err, size_t errlen)
{
    const json_t *acks = json_object_get(b, "acks"), *sbs = json_object_get(b, "sandboxes");
    const json_t *problem = json_object_get(b, "problem"), *killed = json_object_get(b, "killed");
    size_t i;
    json_t *v;

    if ((acks && (!json_is_array(acks) || json_array_size(acks) > HEARTBEAT_MAX_BATCH)) ||
        (sbs && (!json_is_array(sbs) || json_array_size(sbs) > 100000))) {
        snprintf(err, errlen, "acks and sandboxes: must be arrays");
        return -1;
    }
    if (killed && (!json_is_array(killed) || json_array_size(killed) > HEARTBEAT_MAX_BATCH)) {
        snprintf(err, errlen, "killed: must be an array of at most %d", HEARTBEAT_MAX_BATCH);
        return -1;
    }
    json_array_foreach(killed, i, v)
    {
        if (!json_is_string(v) || !token_is_id(json_string_value(v))) {
            snprintf(err, errlen, "killed[%zu]: not a sandbox id", i);
            return -1;
        }
    }
    if (problem && (!json_is_string(problem) || json_string_length(problem) > 255)) {
        snprintf(err, errlen, "problem: must be a string of at most 255 bytes");
        return -1;
    }
    json_array_foreach(acks, i, v) if (!json_is_string(v) || !valid_stream_id(json_string_value(v)))
    {
        snprintf(err, errlen, "acks[%zu]: not a command id", i);
        return -1;
    }
    json_array_foreach(sbs, i, v)
    {
        const char *id = json_string_value(json_object_get(v, "id"));
        const char *st = json_string_value(json_object_get(v, "state"));
        enum sandbox_reported r = st ? sandbox_reported_parse(st) : SANDBOX_REPORTED_UNKNOWN;
        if (!id || !token_is_id(id) || r == SANDBOX_REPORTED_UNKNOWN ||
            r == SANDBOX_REPORTED_MISSING) {
            snprintf(err, errlen,
                     "sandboxes[%zu]: needs an id and a state (running, paused, exited, "
                     "failed)",
                     i);
            return -1;
        }
    }
    return 0;
}

/* snapshots: [{id, workspace, state: ready|failed, reason}], what became of
 * the snapshots this worker was asked for (decision 0048). */
static int check_snapshots(const json_t *snaps, char *err, size_t errlen)
{
    size_t i;
    json_t *v;

    if (snaps && (!json_is_array(snaps) || json_array_size(snaps) > 1000)) {
        snprintf(err, errlen, "snapshots: must be an array of at most 1000");
        return -1;
    }
    json_array_foreach(snaps, i, v)
    {
        const char *st = json_string_value(json_object_get(v, "state"));
        const char *ws = json_string_value(json_object_get(v, "workspace"));
        enum snapshot_state state = st ? snapshot_state_parse(st) : SNAPSHOT_STATE_UNKNOWN;
        if (!snapshot_id_ok(json_string_value(json_object_get(v, "id"))) || !ws ||
            (*ws && !token_is_id(ws)) ||
            (state != SNAPSHOT_STATE_READY && state != SNAPSHOT_STATE_FAILED)) {
            snprintf(err, errlen,
                     "snapshots[%zu]: needs a snapshot id, a workspace and a state (ready, "
                     "failed)",
                     i);
            return -1;
        }
    }
    return 0;
}

static int small_count(const json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0 &&
           json_integer_value(v) <= HEARTBEAT_WARM_SIZE_MAX;
}

/* warm: [{template, runtime, size, ready}], the worker's warm pools
 * (decision 0082), shown by GET /v1/workers. */
static int check_warm(const json_t *warm, char *err, size_t errlen)
{
    size_t i;
    json_t *v;

    if (warm && (!json_is_array(warm) || json_array_size(warm) > HEARTBEAT_WARM_KINDS_MAX)) {
        snprintf(err, errlen, "warm: must be an array of at most %d", HEARTBEAT_WARM_KINDS_MAX);
        return -1;
    }
    json_array_foreach(warm, i, v)
    {
        const char *t = json_string_value(json_object_get(v, "template"));
        const char *rt = json_string_value(json_object_get(v, "runtime"));
        if (!t || !valid_name(t, 64) || !rt || !valid_name(rt, 24) ||
            !small_count(json_object_get(v, "size")) || !small_count(json_object_get(v, "ready"))) {
            snprintf(err, errlen,
                     "warm[%zu]: needs a template, a runtime, a size and a ready count (0-%d)", i,
                     HEARTBEAT_WARM_SIZE_MAX);
            return -1;
        }
    }
    return 0;
}

void heartbeat_warm_ready(const json_t *warm, char out[HEARTBEAT_WARM_READY_LEN])
{
    size_t i, n = 1;
    json_t *v;

    snprintf(out, HEARTBEAT_WARM_READY_LEN, ",");
    json_array_foreach(warm, i, v)
    {
        if (n >= HEARTBEAT_WARM_READY_LEN || i >= HEARTBEAT_WARM_KINDS_MAX ||
            json_integer_value(json_object_get(v, "ready")) <= 0)
            continue;
        n += (size_t)snprintf(out + n, HEARTBEAT_WARM_READY_LEN - n, "%s:%s,",
                              json_string_value(json_object_get(v, "template")),
                              json_string_value(json_object_get(v, "runtime")));
    }
}

int heartbeat_body_check(const json_t *body, char *err, size_t errlen)
{
    if (check_body(body, err, errlen) != 0 ||
        check_snapshots(json_object_get(body, "snapshots"), err, errlen) != 0)
        return -1;
    return check_warm(json_object_get(body, "warm"), err, errlen);
}
