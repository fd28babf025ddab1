/* placement.h: which worker hosts a sandbox.
 *
 * The tenant rule comes first and is structural: a create of workspace W only
 * ever looks at two pools, W's own workers and the unscoped fleet (""). A worker
 * of another workspace is never read, so it can never be chosen. */
#ifndef CORRAL_PLACEMENT_H
#define CORRAL_PLACEMENT_H

#include "scheduler.h"

struct placement_need {
    const char *template_id;
    int egress; /* allowed_domains set: the worker must enforce egress policy */
    int has_require;
    enum tier require;
    double cpu_cores;
    long memory_mb;
    const char *exclude; /* a worker id never to choose (a dead one), or "" */
    int fleet_share;     /* % of the unscoped fleet's slots the workspace may hold (100: all) */
    const char *pin_pool, *pin_worker; /* only this worker (it holds a snapshot), or "" */
};

struct placement {
    char pool[33];
    char wid[33];
    char runtime[33];
    enum tier tier;
    int public_ok; /* the worker lets a sandbox be public (0: an agent's default) */
};

/* Picks the least loaded eligible worker of W's pool and the fleet and reserves a
 * slot on it for sbid. 0, or -1 with err (404 template, 409 capability, 429 the
 * workspace holds its fleet share and its own workers are full, 503 capacity or
 * Redis). */
int placement_reserve(struct rconn *rc, const char *ws, const struct placement_need *need,
                      const char *sbid, struct placement *out, struct sched_error *err);

/* The worker a reservation would choose now, reserving nothing (where a
 * volume is made; need->template_id "" matches any worker). 0, or -1 with err. */
int placement_peek(struct rconn *rc, const char *ws, const struct placement_need *need,
                   struct placement *out, struct sched_error *err);

/* Gives the slot back; idempotent (1 released, 0 nothing to release, -1 Redis). */
int placement_release(struct rconn *rc, const char *pool, const char *wid, const char *sbid);

#endif
