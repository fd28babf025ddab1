/* placement.h: which worker hosts a sandbox.
 *
 * The tenant rule comes first and is structural: a create of workspace W only
 * ever looks at two pools, W's own workers and the unscoped fleet (""). A worker
 * of another workspace is never read, so it can never be chosen. */
#ifndef CORRAL_PLACEMENT_H
#define CORRAL_PLACEMENT_H

#include "placement_store.h"
#include "sched_error.h"

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

#endif
