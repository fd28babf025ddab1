/* placement_store.h: a pool's workers as placement reads them, and a slot taken
 * on one of them or given back, each one script (the rules that choose between
 * pools and turn a refusal into an error are scheduler/placement.c's). */
#ifndef CORRAL_PLACEMENT_STORE_H
#define CORRAL_PLACEMENT_STORE_H

#include "rconn.h"
#include "tier.h"

/* What a create needs from a worker. */
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
    int warm; /* a warm sandbox could serve it: a worker holding one is preferred */
};

/* How far the best worker of a pool got: each stage passed is one more of the
 * need's checks met, in the script's order; PLACE_STAGE_FITS means placeable. */
enum place_stage {
    PLACE_STAGE_NONE = 0,     /* no worker has the template */
    PLACE_STAGE_TEMPLATE = 1, /* has the template, cannot enforce egress policy */
    PLACE_STAGE_EGRESS = 2,   /* enforces egress, offers no runtime of the tier */
    PLACE_STAGE_TIER = 3,     /* offers the tier, has no free capacity (or share) */
    PLACE_STAGE_FITS = 4,
};

/* A look that only reads, or one that also takes the slot it found. */
enum pick_mode { PICK_PEEK, PICK_RESERVE };

struct pick {
    enum place_stage stage;
    long alive;
    char wid[33], runtime[33];
    long rank;
    double load;
    int public_ok;         /* its worker lets sandboxes be public (decision 0062) */
    int warm;              /* its worker holds a warm sandbox of the template and runtime */
    int over_share;        /* the fleet had room, but not within the workspace's share */
    long held, cap, total; /* then: its sandboxes there, its share, the fleet's slots */
};

/* One pool's least loaded eligible worker (only `target` when not ""), and with
 * PICK_RESERVE its slot taken for sbid with the worker-map value val. ws is the
 * workspace whose fleet share is checked (on the unscoped pool ""). 0, or -1
 * when Redis failed. */
int placement_store_pick(struct rconn *rc, const char *ws, const char *pool, enum pick_mode mode,
                         const struct placement_need *n, const char *sbid, const char *val,
                         const char *target, struct pick *out);

/* Gives the slot back; idempotent (1 released, 0 nothing to release, -1 Redis). */
int placement_release(struct rconn *rc, const char *pool, const char *wid, const char *sbid);

#endif
