/* snapshot.h: taking a sandbox's snapshot, creating from one, removing one
 * (decision 0048). A snapshot is the sandbox's filesystem committed as an
 * image on its worker (memory is not kept); creates from it are pinned to
 * that worker. */
#ifndef CORRAL_SNAPSHOT_H
#define CORRAL_SNAPSHOT_H

#include "pause.h"
#include "sandbox_store.h"
#include "sched_error.h"
#include "snapshot_store.h"

struct sandbox_spec; /* scheduler.h */
struct sched_conf;   /* scheduler.h */

/* Snapshots ws's live sandbox sbid (named name, may be ""); fork 1: one made
 * for a fork (not listed). Waits up to wait_ms for its worker; id set as soon
 * as it is recorded. LIFE_DONE, LIFE_ABSENT, LIFE_SLOW, LIFE_FAILED (why),
 * LIFE_STORE_DOWN. */
enum life_outcome snapshot_take(struct rconn *rc, const char *ws, const char *sbid,
                                const char *name, int fork, const char *actor, int wait_ms,
                                char id[SNAPSHOT_ID_MAX], char *why, size_t whylen);

/* A worker's word on a snapshot it was asked for ("ready" or "failed",
 * decoded here): heard only from the worker that holds it; wakes the
 * waiting call. */
void snapshot_worker_report(struct rconn *rc, const char *ws, const char *wid, const char *id,
                            const char *state_word, const char *reason);

/* Removes ws's snapshot id: its record, and its image on its worker. 1, 0
 * absent, -1 Redis. */
int snapshot_delete(struct rconn *rc, const char *ws, const char *id, const char *actor);

/* The spec of a fork of src from its snapshot snap_id: src's size, tokens,
 * egress policy and metadata, timeout_s. Free with sandbox_spec_free. 0 or
 * -1 (memory). */
int snapshot_fork_spec(const struct sandbox_record *src, const char *snap_id, long timeout_s,
                       struct sandbox_spec *out);

/* A create whose template names one of ws's snapshots: the spec is pinned to
 * the snapshot's worker and image. 0 (a snapshot, or not one at all), or -1
 * with err (404: no such snapshot in ws, 409: not ready, 503). */
int snapshot_resolve(struct rconn *rc, const char *ws, struct sandbox_spec *spec,
                     struct sched_error *err);

#endif
