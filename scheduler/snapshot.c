#include "snapshot.h"

#include "scheduler.h"

#include "audit.h"
#include "clock.h"
#include "commands.h"
#include "sandbox_store.h"
#include "secret.h"
#include "worker_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Waits for the worker's word on snapshot id (it wakes the snapshot's id). */
static enum life_outcome wait_ready(struct rconn *rc, const char *ws, const char *id, int wait_ms,
                                    char *why, size_t whylen)
{
    long long deadline = (long long)clock_now_ms() + wait_ms;
    struct snapshot_record s;
    char msg[64];

    for (;;) {
        int found = snapshot_read(rc, ws, id, &s);
        if (found < 0)
            return LIFE_STORE_DOWN;
        if (found == 0 || s.state == SNAPSHOT_STATE_FAILED) {
            snprintf(why, whylen, "snapshot failed: %s", found ? s.reason : "it was removed");
            return LIFE_FAILED;
        }
        if (s.state == SNAPSHOT_STATE_READY)
            return LIFE_DONE;
        long long left = deadline - (long long)clock_now_ms();
        if (left <= 0)
            return LIFE_SLOW;
        if (sandbox_wait_wake(rc, ws, id, left < 1000 ? (int)left : 1000, msg, sizeof(msg)) < 0)
            return LIFE_STORE_DOWN;
    }
}

/* The template a snapshot's creates are placed by: the one its sandbox was
 * made from (a snapshot of a sandbox made from a snapshot keeps the first). */
static void base_template(const struct sandbox_record *rec, char *out, size_t len)
{
    snprintf(out, len, "%s", *rec->base_template ? rec->base_template : rec->template_id);
}

enum life_outcome snapshot_take(struct rconn *rc, const char *ws, const char *sbid,
                                const char *name, int fork, const char *actor, int wait_ms,
                                char id[SNAPSHOT_ID_MAX], char *why, size_t whylen)
{
    struct sandbox_record rec;
    struct snapshot_record s = {.fork = fork};
    enum life_outcome o;
    char hex[21];
    int found = sandbox_read(rc, ws, sbid, &rec);

    if (found < 0)
        return LIFE_STORE_DOWN;
    if (found == 0 || !sandbox_is_live(&rec)) {
        if (found)
            sandbox_record_free(&rec);
        return LIFE_ABSENT;
    }
    if (secret_random_hex(hex, 10) != 0) {
        sandbox_record_free(&rec);
        snprintf(why, whylen, "no randomness for a snapshot id");
        return LIFE_FAILED;
    }
    snprintf(s.id, sizeof(s.id), SNAPSHOT_PREFIX "%s", hex);
    snprintf(s.sandbox, sizeof(s.sandbox), "%s", sbid);
    base_template(&rec, s.template_id, sizeof(s.template_id));
    snprintf(s.pool, sizeof(s.pool), "%s", rec.pool);
    snprintf(s.worker, sizeof(s.worker), "%s", rec.worker);
    snprintf(s.name, sizeof(s.name), "%s", name);
    snapshot_image(s.id, s.image, sizeof(s.image));
    s.created_at = (long long)clock_now_ms();
    sandbox_record_free(&rec);
    snprintf(id, SNAPSHOT_ID_MAX, "%s", s.id);
    if (snapshot_insert(rc, ws, &s) != 0)
        return LIFE_STORE_DOWN;
    audit_sandbox(rc, ws, sbid, AUDIT_SNAPSHOT_REQUESTED, actor, s.id);
    /* Nothing half-made stays: a snapshot that cannot or did not happen
     * leaves no record behind (a slow one stays pending: its worker may yet
     * report it). */
    if (worker_is_alive(rc, s.pool, s.worker) != 1 ||
        command_send_args(rc, s.pool, s.worker, "snapshot", sbid,
                          json_pack("{s:s, s:s, s:s}", "snapshot_id", s.id, "image", s.image,
                                    "workspace", ws)) != 0) {
        snapshot_remove(rc, ws, s.id, &s);
        snprintf(why, whylen, "snapshot failed: the sandbox's worker is not available");
        return LIFE_FAILED;
    }
    o = wait_ready(rc, ws, s.id, wait_ms, why, whylen);
    if (o == LIFE_FAILED)
        snapshot_remove(rc, ws, s.id, &s);
    return o;
}

void snapshot_worker_report(struct rconn *rc, const char *ws, const char *wid, const char *id,
                            const char *state_word, const char *reason)
{
    char actor[AUDIT_ACTOR_MAX];
    struct snapshot_record s;
    enum snapshot_state state = snapshot_state_parse(state_word);

    if (snapshot_report(rc, ws, id, wid, state, reason) != 1)
        return;
    audit_actor_worker(actor, wid);
    if (snapshot_read(rc, ws, id, &s) == 1)
        audit_sandbox_event(rc, ws,
                            &(struct audit_event){.event = state == SNAPSHOT_STATE_READY
                                                               ? AUDIT_SNAPSHOTTED
                                                               : AUDIT_FAILED,
                                                  .actor = actor,
                                                  .sandbox = s.sandbox,
                                                  .worker = wid,
                                                  .reason = *reason ? reason : id});
    sandbox_wake(rc, ws, id, snapshot_state_name(state));
}

int snapshot_delete(struct rconn *rc, const char *ws, const char *id, const char *actor)
{
    struct snapshot_record s;
    int found = snapshot_remove(rc, ws, id, &s);

    if (found != 1)
        return found;
    audit_sandbox_event(rc, ws,
                        &(struct audit_event){.event = AUDIT_SNAPSHOT_REMOVED,
                                              .actor = actor,
                                              .sandbox = s.sandbox,
                                              .worker = s.worker,
                                              .reason = id});
    if (worker_is_alive(rc, s.pool, s.worker) == 1)
        command_send_args(rc, s.pool, s.worker, "image_remove", s.sandbox,
                          json_pack("{s:s}", "image", s.image));
    return 1;
}

int snapshot_resolve(struct rconn *rc, const char *ws, struct sandbox_spec *spec,
                     struct sched_error *err)
{
    struct snapshot_record s;
    int found;

    if (!snapshot_id_ok(spec->template_id))
        return 0;
    found = snapshot_read(rc, ws, spec->template_id, &s);
    if (found < 0) {
        sched_error_set(err, 503, "state store unavailable");
        return -1;
    }
    if (found == 0) {
        sched_error_set(err, 404, "template: '%s' not found", spec->template_id);
        return -1;
    }
    if (s.state != SNAPSHOT_STATE_READY) {
        sched_error_set(err, 409, "template: snapshot '%s' is %s", s.id, s.state_text);
        return -1;
    }
    snprintf(spec->image, sizeof(spec->image), "%s", s.image);
    snprintf(spec->base_template, sizeof(spec->base_template), "%s", s.template_id);
    snprintf(spec->pin_pool, sizeof(spec->pin_pool), "%s", s.pool);
    snprintf(spec->pin_worker, sizeof(spec->pin_worker), "%s", s.worker);
    return 0;
}

int snapshot_fork_spec(const struct sandbox_record *src, const char *snap_id, long timeout_s,
                       struct sandbox_spec *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->template_id, sizeof(out->template_id), "%s", snap_id);
    out->timeout_s = timeout_s;
    out->timeout_given = 1;
    out->cpu_cores = src->cpu_cores;
    out->memory_mb = src->memory_mb;
    out->has_require =
        *src->require_isolation && tier_parse(src->require_isolation, &out->require) == 0;
    out->secure = src->secure;
    out->public_traffic = src->public_traffic;
    out->internet = src->internet;
    /* A fork is a new start: a policy recorded for the next one is its own
     * ("null": none), else the one in force (decision 0091). */
    const char *policy = src->egress_next ? src->egress_next : src->egress;
    if (strcmp(policy, "null") == 0)
        policy = "";
    out->egress_policy = *policy != '\0';
    snprintf(out->mask_host, sizeof(out->mask_host), "%s", src->mask_host ? src->mask_host : "");
    /* Its env vars are in the snapshot's image already, as the sandbox had them. */
    out->metadata_json = strdup(src->metadata);
    out->env_json = strdup("{}");
    out->allowed_json = strdup(*src->allowed_domains ? src->allowed_domains : "[]");
    out->egress_json = out->egress_policy ? strdup(policy) : NULL;
    if (!out->metadata_json || !out->env_json || !out->allowed_json ||
        (out->egress_policy && !out->egress_json)) {
        sandbox_spec_free(out);
        return -1;
    }
    return 0;
}
