/* sandbox_store.h: a sandbox's record in its workspace's slot, and its state
 * transitions. Each transition is one script, so two handlers (or a handler and
 * corral-sched) racing on the same sandbox cannot both win. */
#ifndef CORRAL_SANDBOX_STORE_H
#define CORRAL_SANDBOX_STORE_H

#include "rconn.h"

#include <stdint.h>

/* Writes a new "pending" record from field/value pairs. 0 or -1. */
int sandbox_insert(struct rconn *rc, const char *ws, const char *sbid, int64_t pending_deadline,
                   int nfields, const char **fields_and_values);

/* Deletes the record and every index entry; *worker and *pool are filled from it.
 * 1 removed, 0 there was none, -1 Redis. */
int sandbox_remove(struct rconn *rc, const char *ws, const char *sbid, char worker[33],
                   char pool[33]);

/* Outcomes of a worker's report about a sandbox. */
enum report_outcome {
    REPORT_IGNORED = 0, /* nothing changed */
    REPORT_STARTED,     /* pending -> running: wake the waiting create */
    REPORT_STOPPED,     /* running/pending -> exited or error: release its resources */
    REPORT_KILL,        /* not this worker's (or its reservation lapsed): kill it */
};

/* Applies "wid says sbid is <state>": running, exited, failed, or missing (a
 * full report that omits it: only a running sandbox is then marked exited). */
enum report_outcome sandbox_report(struct rconn *rc, const char *ws, const char *sbid,
                                   const char *wid, const char *state, const char *reason,
                                   int *was_pending);

/* For a dead worker: "replace" (pending: place again), "lost" (was running, now
 * lost), or "skip" (not on that worker any more). NULL on Redis failure. */
const char *sandbox_orphan(struct rconn *rc, const char *ws, const char *sbid, const char *wid,
                           char *buf, size_t buflen);

/* Moves a pending sandbox from old_wid to a new placement; 1 moved, 0 no longer
 * pending on old_wid, -1. egress_next is the record's egress_next as read
 * before placing ("" none): it becomes the sandbox's policy if still current. */
int sandbox_move(struct rconn *rc, const char *ws, const char *sbid, const char *old_wid,
                 const char *pool, const char *wid, const char *runtime, const char *tier,
                 const char *egress_next);

/* Records the egress policy (JSON text; NULL: no policy) a live sandbox gets at
 * its next start, leaving the running one alone. 1 recorded, 0 no such
 * sandbox, 2 it has ended, -1 Redis. */
int sandbox_set_egress_next(struct rconn *rc, const char *ws, const char *sbid, const char *policy);

/* Moves the kill deadline of a running sandbox (E2B setTimeout / connect);
 * only_extend keeps a later one. 1 set, 0 not running, -1 Redis. */
int sandbox_set_deadline(struct rconn *rc, const char *ws, const char *sbid, int64_t expires_ms,
                         int only_extend);

/* Wakes the handler waiting on a create with "running" or "failed:<reason>". */
int sandbox_wake(struct rconn *rc, const char *ws, const char *sbid, const char *msg);

/* Fetches the whole record (HGETALL reply) or NULL when absent or on failure;
 * *absent tells which. */
redisReply *sandbox_get(struct rconn *rc, const char *ws, const char *sbid, int *absent);

#endif
