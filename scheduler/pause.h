/* pause.h: pausing and resuming a sandbox in place, and what a passed
 * deadline does (decision 0044). The record changes first (one script), then
 * the worker is told, then the caller may wait for the worker's report. */
#ifndef CORRAL_PAUSE_H
#define CORRAL_PAUSE_H

#include "rconn.h"
#include "scheduler.h"

#include <stddef.h>

enum life_outcome {
    LIFE_DONE,       /* paused (or running again) */
    LIFE_ALREADY,    /* it already was */
    LIFE_ABSENT,     /* no such live sandbox: 404 */
    LIFE_BUSY,       /* starting, or the other way under way: 409 */
    LIFE_OVER_LIMIT, /* a resume the workspace's limit refuses: 403, as a create */
    LIFE_SLOW,       /* the worker did not answer within the wait: 504; it still may */
    LIFE_NETWORK,    /* a resume keeping memory cannot apply the recorded policy: 409 (why) */
    LIFE_FAILED,     /* the sandbox ended instead (why says how) */
    LIFE_STORE_DOWN, /* Redis: 503 */
};

/* Pauses sbid and waits up to wait_ms for its worker to have frozen it (or,
 * keep_memory 0, stopped it: only its files are kept, decision 0074). actor
 * (audit.h) is recorded with the request. */
enum life_outcome sandbox_pause(struct rconn *rc, const struct sched_conf *c, const char *ws,
                                const char *sbid, const char *actor, int keep_memory, int wait_ms,
                                char *why, size_t whylen);

/* Resumes a paused sbid (timeout_s >= 0: its new timeout; fresh: booted afresh
 * even if its memory was kept) and waits up to wait_ms for it to run, with the
 * policy recorded by PUT .../network applied. *limit: the workspace's limit,
 * for LIFE_OVER_LIMIT. */
enum life_outcome sandbox_resume(struct rconn *rc, const struct sched_conf *c, const char *ws,
                                 const char *sbid, const char *actor, long timeout_s, int fresh,
                                 int wait_ms, long *limit, char *why, size_t whylen);

/* corral-sched: deadlines passed in ws, each claimed once: paused if created
 * to pause on timeout, else killed. How many it acted on, or -1. */
int sweep_timeouts(struct rconn *rc, const struct sched_conf *c, const char *ws);

#endif
