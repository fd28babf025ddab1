#include "placement.h"

#include "clock.h"
#include "worker_store.h"
#include "placement_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void take_pick(struct placement *out, const char *pool, const struct pick *p)
{
    *out = (struct placement){.tier = (enum tier)p->rank, .public_ok = p->public_ok};
    snprintf(out->pool, sizeof(out->pool), "%s", pool);
    snprintf(out->wid, sizeof(out->wid), "%s", p->wid);
    snprintf(out->runtime, sizeof(out->runtime), "%s", p->runtime);
}

static void explain(const struct placement_need *n, const struct pick *a, const struct pick *b,
                    struct sched_error *err)
{
    enum place_stage stage = a->stage > b->stage ? a->stage : b->stage;

    if (a->alive + b->alive == 0)
        sched_error_set(err, 503, "no worker is available to this workspace");
    else if (stage == PLACE_STAGE_NONE)
        sched_error_set(err, 404, "template: '%s' not found", n->template_id);
    else if (stage == PLACE_STAGE_TEMPLATE)
        sched_error_set(err, 409,
                        "worker capability unavailable: no eligible worker can enforce "
                        "allowed_domains (egress policy)");
    else if (stage == PLACE_STAGE_TIER && b->over_share)
        sched_error_set(err, 429,
                        "fleet_share: this workspace holds %ld sandboxes on the shared fleet, "
                        "its share of %ld (fleet_share = %d%% of %ld slots); retry when one "
                        "ends, or add workers of its own",
                        b->held, b->cap, n->fleet_share, b->total);
    else if (stage == PLACE_STAGE_EGRESS)
        sched_error_set(err, 409,
                        "require_isolation: no eligible worker offers isolation %s; nothing "
                        "was created",
                        tier_name(n->require));
    else
        sched_error_set(err, 503,
                        "no eligible worker has free capacity (slots, cpu_cores, memory_mb)");
}

/* The workspace's own pool wins when it is no more loaded than the fleet,
 * or holds a warm sandbox (decision 0082): its workers are there for it. A
 * warm sandbox of the fleet never draws a create away from them (a person's
 * agent-mode worker, a tenant's own machines); within a pool, the pick
 * already prefers a warm worker. */
static const struct pick *better(const struct pick *own, const struct pick *fleet)
{
    if (own->stage == PLACE_STAGE_FITS &&
        (fleet->stage < PLACE_STAGE_FITS || own->warm || own->load <= fleet->load))
        return own;
    return fleet;
}

/* A look at W's pool and the fleet: the better pick of the two, or NULL with
 * err (Redis, or why neither fits). */
static const struct pick *peek_both(struct rconn *rc, const char *ws,
                                    const struct placement_need *need, const char *sbid,
                                    const char *val, struct pick *own, struct pick *fleet,
                                    struct sched_error *err)
{
    if (placement_store_pick(rc, ws, ws, PICK_PEEK, need, sbid, val, "", own) ||
        placement_store_pick(rc, ws, "", PICK_PEEK, need, sbid, val, "", fleet)) {
        sched_error_set(err, 503, "state store unavailable");
        return NULL;
    }
    if (own->stage < PLACE_STAGE_FITS && fleet->stage < PLACE_STAGE_FITS) {
        explain(need, own, fleet, err);
        return NULL;
    }
    return better(own, fleet);
}

/* Pinned to one worker (it holds the snapshot the sandbox is made from): that
 * one or none. Its pool is the workspace's or the fleet's, from a record of
 * this workspace, so the tenant rule holds. */
static int reserve_pinned(struct rconn *rc, const char *ws, const struct placement_need *need,
                          const char *sbid, const char *val, struct placement *out,
                          struct sched_error *err)
{
    struct pick got, none = {0};

    if (placement_store_pick(rc, ws, need->pin_pool, PICK_RESERVE, need, sbid, val,
                             need->pin_worker, &got)) {
        sched_error_set(err, 503, "state store unavailable");
        return -1;
    }
    if (got.stage != PLACE_STAGE_FITS) {
        if (got.alive == 0)
            sched_error_set(err, 503,
                            "the worker that holds this snapshot (%s) is not available; "
                            "snapshots stay on the worker that made them",
                            need->pin_worker);
        else
            explain(need, &got, &none, err);
        return -1;
    }
    take_pick(out, need->pin_pool, &got);
    return 0;
}

int placement_reserve(struct rconn *rc, const char *ws, const struct placement_need *need,
                      const char *sbid, struct placement *out, struct sched_error *err)
{
    char val[160];
    struct pick own, fleet, got;
    struct worker_slot slot = {.cpu = need->cpu_cores, .mem = need->memory_mb};

    snprintf(slot.ws, sizeof(slot.ws), "%s", ws);
    slot.since_ms = (long long)clock_now_ms();
    if (worker_slot_encode(&slot, val, sizeof(val)) != 0) {
        sched_error_set(err, 500, "slot value too long");
        return -1;
    }
    if (need->pin_worker && *need->pin_worker)
        return reserve_pinned(rc, ws, need, sbid, val, out, err);
    /* A few tries: another create may take the chosen worker's last slot between
     * the peek and the reservation; then we look again. */
    for (int attempt = 0; attempt < 4; attempt++) {
        const char *pool;
        const struct pick *best;

        if (!(best = peek_both(rc, ws, need, sbid, val, &own, &fleet, err)))
            return -1;
        pool = best == &own ? ws : "";
        if (placement_store_pick(rc, ws, pool, PICK_RESERVE, need, sbid, val, best->wid, &got)) {
            sched_error_set(err, 503, "state store unavailable");
            return -1;
        }
        if (got.stage == PLACE_STAGE_FITS) {
            take_pick(out, pool, &got);
            return 0;
        }
    }
    sched_error_set(err, 503, "no eligible worker has free capacity (slots, cpu_cores, memory_mb)");
    return -1;
}

int placement_peek(struct rconn *rc, const char *ws, const struct placement_need *need,
                   struct placement *out, struct sched_error *err)
{
    struct pick own, fleet;
    const struct pick *best;

    if (!(best = peek_both(rc, ws, need, "", "", &own, &fleet, err)))
        return -1;
    take_pick(out, best == &own ? ws : "", best);
    return 0;
}
