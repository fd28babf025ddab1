#include "scheduler.h"

#include "snapshot.h"
#include "template.h"
#include "volume.h"

#include "accounts.h"
#include "admission.h"
#include "audit.h"
#include "clock.h"
#include "commands.h"
#include "env_seal.h"
#include "placement.h"
#include "sandbox_store.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sched_conf_init(struct sched_conf *sc, const struct corral_conf *c)
{
    sc->create_timeout_ms = (int)c->create_timeout_ms;
    sc->grace_ms = (int)c->grace_ms;
    sc->fleet_share = (int)c->fleet_share;
    sc->env_secret = c->server_secret;
    sc->paused_max_ms = (long long)c->paused_max_s * 1000;
    sc->template_ready_s = c->template_ready_s;
    memcpy(sc->ceilings, c->ceilings, sizeof(sc->ceilings));
    /* Here, so that every process that runs the scheduler's rules (corral-api,
     * corral-sched) keeps events as long as its corral.conf says. */
    audit_set_retention(c->audit_retention_s);
}

void sandbox_spec_free(struct sandbox_spec *s)
{
    free(s->metadata_json);
    free(s->env_json);
    free(s->allowed_json);
    free(s->egress_json);
    free(s->mounts_json);
    free(s->volumes_json);
    free(s->start_json);
    free(s->build_json);
    s->start_json = s->build_json = NULL;
    s->metadata_json = s->env_json = s->allowed_json = s->egress_json = NULL;
    s->mounts_json = s->volumes_json = NULL;
}

static void need_from_spec(const struct sandbox_spec *spec, const char *exclude,
                           struct placement_need *need)
{
    /* A public image (a build's fromImage, docs/templates.md) is pulled by
     * whichever worker it lands on: no configured template is needed. */
    need->template_id = *spec->base_template                              ? spec->base_template
                        : *spec->image && !snapshot_image_is(spec->image) ? ""
                                                                          : spec->template_id;
    need->egress = spec->egress_policy;
    need->has_require = spec->has_require;
    need->require = spec->require;
    need->cpu_cores = spec->cpu_cores;
    need->memory_mb = spec->memory_mb;
    need->exclude = exclude;
    /* No fleet share here: scheduler_create sets it for a new create. A
     * redelivery was admitted under the share once; refusing it now would fail
     * a create already under way (decision 0034). */
    need->fleet_share = 100;
    need->pin_pool = spec->pin_pool;
    need->pin_worker = spec->pin_worker;
    /* What a worker's warm pool can serve (decision 0082); the worker has the
     * last word (the disk size, the tier), and makes it cold otherwise. */
    need->warm = !spec->egress_policy && !*spec->image && !*spec->base_template &&
                 !spec->volumes_json && !spec->start_json && !spec->build_json;
}

/* The record a create writes, from its resolved spec and placement. The
 * workspace's limits are copied into it, so that a redelivery or a later
 * start uses the values the sandbox was created with. The env vars (users'
 * secrets) are recorded only sealed (common/env_seal.h). */
static void record_of(struct sandbox_record *r, const char *ws, const char *sbid,
                      const struct sandbox_spec *spec, const struct placement *p,
                      const long limits[WS_LIMIT_COUNT], const char *env_sealed)
{
    sandbox_record_defaults(r);
    r->id = sbid;
    r->ws = ws;
    r->template_id = spec->template_id;
    r->state = SANDBOX_STATE_PENDING;
    r->pool = p->pool;
    r->worker = p->wid;
    r->runtime = p->runtime;
    r->tier = tier_name(p->tier);
    r->require_isolation = spec->has_require ? tier_name(spec->require) : "";
    r->timeout_s = spec->timeout_s;
    r->cpu_cores = spec->cpu_cores;
    r->memory_mb = spec->memory_mb;
    r->metadata = spec->metadata_json;
    r->env = env_sealed;
    r->allowed_domains = spec->allowed_json;
    r->created_at = clock_now_ms();
    r->egress_policy = spec->egress_policy != 0;
    r->secure = spec->secure != 0;
    r->public_traffic = spec->public_traffic != 0;
    r->egress = spec->egress_json ? spec->egress_json : "";
    r->mask_host = spec->mask_host;
    r->internet = spec->internet < 0 ? -1 : spec->internet != 0;
    r->pids_limit = limits[WS_LIMIT_PIDS];
    r->disk_mb = limits[WS_LIMIT_DISK_MB];
    r->pause_on_timeout = spec->pause_on_timeout != 0;
    r->auto_resume = spec->auto_resume != 0;
    r->keep_memory = spec->keep_memory != 0;
    r->image = spec->image;
    r->base_template = spec->base_template;
    r->volumes = spec->volumes_json ? spec->volumes_json : "";
    r->start = spec->start_json ? spec->start_json : "";
    r->build = spec->build_id;
    r->build_spec = spec->build_json ? spec->build_json : "";
}

/* Writes the record, then sends its worker the create as read back. */
static int record_and_send(struct rconn *rc, const char *ws, const char *sbid,
                           const struct sandbox_spec *spec, const struct placement *p,
                           const long limits[WS_LIMIT_COUNT], int64_t deadline,
                           const char *env_sealed)
{
    struct sandbox_record rec;
    int rv;

    record_of(&rec, ws, sbid, spec, p, limits, env_sealed);
    if (sandbox_insert(rc, &rec, deadline) != 0)
        return -1;
    if (sandbox_read(rc, ws, sbid, &rec) != 1)
        return -1;
    rv = command_send_create(rc, p->pool, p->wid, &rec);
    sandbox_record_free(&rec);
    return rv;
}

/* Undo in reverse order. Each step is idempotent and, if Redis is gone, what
 * it leaves behind is reclaimed anyway: the admission reservation lapses at its
 * deadline and corral-sched reconciles worker slots against sandbox records. */
static void undo_create(struct rconn *rc, const char *ws, const char *sbid,
                        const struct placement *p)
{
    char worker[33], pool[33];

    sandbox_remove(rc, ws, sbid, worker, pool);
    if (p)
        placement_release(rc, p->pool, p->wid, sbid);
    admission_release(rc, ws, sbid);
}

/* A create's event: its tier is the one it asked for until it is placed. */
static void audit_create(struct rconn *rc, const char *ws, const char *actor, const char *sbid,
                         const struct sandbox_spec *spec, const char *event, const char *reason)
{
    struct audit_event e = {.event = event,
                            .actor = actor,
                            .sandbox = sbid,
                            .tier = spec->has_require ? tier_name(spec->require) : NULL,
                            .reason = reason};

    audit_append(rc, ws, &e);
}

static void audit_placed(struct rconn *rc, const char *ws, const char *actor, const char *sbid,
                         const struct placement *p, const char *why)
{
    char reason[160];
    struct audit_event e = {.event = AUDIT_PLACED,
                            .actor = actor,
                            .sandbox = sbid,
                            .worker = p->wid,
                            .tier = tier_name(p->tier),
                            .reason = reason};

    snprintf(reason, sizeof(reason), "%sruntime %s on %s", why, p->runtime,
             *p->pool ? "a worker of the workspace" : "the shared fleet");
    audit_append(rc, ws, &e);
}

/* A template's ready command gets corral.conf's template_ready_s, never
 * more than the create's wait less a margin for the worker's report to
 * arrive (at least 5 s). */
static long ready_timeout_s(const struct sched_conf *c)
{
    long s = c->create_timeout_ms / 1000 - 5;

    if (c->template_ready_s > 0 && c->template_ready_s < s)
        s = c->template_ready_s;
    return s < 5 ? 5 : s;
}

static int create_resolved(struct rconn *rc, const struct sched_conf *c, const char *ws,
                           const char *actor, const struct sandbox_spec *spec,
                           struct sandbox_spec *resolved, char sbid[SANDBOX_ID_MAX],
                           struct sched_error *err)
{
    int64_t deadline = clock_now_ms() + c->create_timeout_ms + c->grace_ms;
    struct placement_need need;
    struct placement p;
    long limit = 0, limits[WS_LIMIT_COUNT];
    char ws_name[128], *env_sealed;
    int admitted;

    if (secret_random_hex(sbid, 10) != 0) {
        sched_error_set(err, 500, "no randomness for a sandbox id");
        return -1;
    }
    if (workspace_info(rc, ws, ws_name, sizeof(ws_name), limits) != 0) {
        sched_error_set(err, 503, "state store unavailable");
        return -1;
    }
    audit_create(rc, ws, actor, sbid, spec, AUDIT_REQUESTED, NULL);
    /* Limits a workspace stored before the operator lowered a ceiling get the
     * ceiling (a default timeout above sandbox_max_timeout_s among them). */
    ws_limits_cap(limits, c->ceilings);
    if (!resolved->timeout_given)
        resolved->timeout_s = limits[WS_LIMIT_TIMEOUT];
    if (resolved->timeout_s > c->ceilings[WS_LIMIT_TIMEOUT]) {
        sched_error_set(err, 400, "timeout: at most %ld seconds (the operator's maximum)",
                        c->ceilings[WS_LIMIT_TIMEOUT]);
        audit_create(rc, ws, actor, sbid, spec, AUDIT_REFUSED, err->message);
        return -1;
    }
    if (snapshot_resolve(rc, ws, resolved, err) != 0 ||
        template_resolve(rc, ws, ready_timeout_s(c), resolved, err) != 0 ||
        volume_resolve(rc, ws, resolved, err) != 0) {
        audit_create(rc, ws, actor, sbid, spec, AUDIT_REFUSED, err->message);
        return -1;
    }
    spec = resolved;
    admitted =
        admission_reserve(rc, ws, sbid, deadline, c->ceilings[WS_LIMIT_MAX_CONCURRENT], &limit);
    if (admitted < 0) {
        sched_error_set(err, 503, "state store unavailable");
        return -1;
    }
    if (admitted == 0) {
        sched_error_set(err, 403,
                        "admission: the workspace is at its limit of %ld concurrent sandboxes "
                        "(max_concurrent_sandboxes)",
                        limit);
        audit_create(rc, ws, actor, sbid, spec, AUDIT_REFUSED, err->message);
        return -1;
    }
    need_from_spec(spec, "", &need);
    need.fleet_share = c->fleet_share;
    if (placement_reserve(rc, ws, &need, sbid, &p, err) != 0) {
        admission_release(rc, ws, sbid);
        audit_create(rc, ws, actor, sbid, spec, AUDIT_REFUSED, err->message);
        return -1;
    }
    /* Public only where its worker allows it: an agent-mode worker (a
     * person's machine) does not unless its config says so, whatever the
     * caller asked (decision 0062). The caller gets the traffic token. */
    resolved->public_traffic = resolved->public_traffic && p.public_ok;
    env_sealed = env_seal(c->env_secret, sbid, spec->env_json);
    if (!env_sealed || record_and_send(rc, ws, sbid, spec, &p, limits, deadline, env_sealed) != 0) {
        undo_create(rc, ws, sbid, &p);
        sched_error_set(err, 503, env_sealed ? "state store unavailable" : "cannot seal env vars");
        free(env_sealed);
        return -1;
    }
    free(env_sealed);
    audit_placed(rc, ws, actor, sbid, &p, "");
    return 0;
}

/* A shallow copy of spec takes what resolving a snapshot and volumes fills
 * in; only its resolved volumes are its own. */
int scheduler_create(struct rconn *rc, const struct sched_conf *c, const char *ws,
                     const char *actor, const struct sandbox_spec *spec, char sbid[SANDBOX_ID_MAX],
                     struct sched_error *err)
{
    struct sandbox_spec resolved = *spec;
    int rv;

    resolved.volumes_json = resolved.start_json = NULL;
    rv = create_resolved(rc, c, ws, actor, spec, &resolved, sbid, err);
    free(resolved.volumes_json);
    free(resolved.start_json);
    return rv;
}

/* Rebuilds the spec a pending sandbox was created with, for placing it again.
 * A policy recorded by PUT .../network (egress_next) applies from this new
 * start on; until sandbox_move has made it the record's policy, either one may
 * end up in force, so the worker must be egress-capable if either has one. */
static void spec_from_record(const struct sandbox_record *rec, struct sandbox_spec *s)
{
    const char *next = rec->egress_next;

    memset(s, 0, sizeof(*s));
    snprintf(s->template_id, sizeof(s->template_id), "%s", rec->template_id);
    s->cpu_cores = rec->cpu_cores;
    s->memory_mb = rec->memory_mb;
    s->has_require =
        *rec->require_isolation && tier_parse(rec->require_isolation, &s->require) == 0;
    s->egress_policy = rec->egress_policy || (next && *next && strcmp(next, "null") != 0);
    /* From a snapshot: it can only start where the snapshot is. A template's
     * image is in the registry: any worker pulls it. */
    snprintf(s->image, sizeof(s->image), "%s", rec->image);
    snprintf(s->base_template, sizeof(s->base_template), "%s", rec->base_template);
    if (snapshot_image_is(rec->image) || *rec->volumes) {
        snprintf(s->pin_pool, sizeof(s->pin_pool), "%s", rec->pool);
        snprintf(s->pin_worker, sizeof(s->pin_worker), "%s", rec->worker);
    }
}

/* Reads the record again after the move (the worker gets what is now in
 * force) and sends it the create. 0, or -1. */
static int send_moved(struct rconn *rc, const char *ws, const char *sbid, const struct placement *p)
{
    struct sandbox_record rec;
    int rv = -1;

    if (sandbox_read(rc, ws, sbid, &rec) == 1)
        rv = command_send_create(rc, p->pool, p->wid, &rec);
    sandbox_record_free(&rec);
    return rv;
}

int scheduler_replace(struct rconn *rc, const struct sched_conf *c, const char *ws,
                      const char *sbid, const char *dead_wid, struct sched_error *err)
{
    struct sandbox_spec spec;
    struct placement_need need;
    struct placement p;
    struct sandbox_record rec;
    int found, moved;

    (void)c; /* kept for its callers' sake: nothing of it is needed since the
              * create no longer carries a token (decision 0067) */
    found = sandbox_read(rc, ws, sbid, &rec);
    if (found != 1) {
        sched_error_set(err, found == 0 ? 404 : 503,
                        found == 0 ? "sandbox gone" : "state store unavailable");
        return -1;
    }
    spec_from_record(&rec, &spec);
    need_from_spec(&spec, dead_wid, &need);
    if (placement_reserve(rc, ws, &need, sbid, &p, err) != 0) {
        sandbox_record_free(&rec);
        return -1;
    }
    moved = sandbox_move(rc, ws, sbid, dead_wid, p.pool, p.wid, p.runtime, tier_name(p.tier),
                         rec.egress_next ? rec.egress_next : "");
    sandbox_record_free(&rec);
    if (moved != 1 || send_moved(rc, ws, sbid, &p) != 0) {
        placement_release(rc, p.pool, p.wid, sbid);
        sched_error_set(err, 409, "sandbox is no longer pending");
        return -1;
    }
    audit_placed(rc, ws, AUDIT_ACTOR_SCHEDULER, sbid, &p, "placed again, its worker died: ");
    return 0;
}
