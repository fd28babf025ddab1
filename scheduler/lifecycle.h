/* lifecycle.h: ending sandboxes and workers, and the sweeps corral-sched runs.
 * Every function here is idempotent and safe to run from several processes at
 * once: each transition is claimed by one script, and only the claimant acts. */
#ifndef CORRAL_LIFECYCLE_H
#define CORRAL_LIFECYCLE_H

#include "rconn.h"
#include "scheduler.h"

/* Deletes a sandbox: record, admission, worker slot, and a kill to its worker.
 * reason wakes a create still waiting on it. The one call that deleted it
 * records event (audit.h) by actor. 1 killed, 0 absent, -1 Redis. */
int sandbox_kill(struct rconn *rc, const char *ws, const char *sbid, const char *event,
                 const char *actor, const char *reason);

/* Where sandbox_kill_sent sent the kill (sent 0: its worker is not alive, or
 * it had none yet), for a caller that waits for it (command_kill_await); set
 * wait before the call to have the wait expected (command_kill_expect). */
struct kill_sent {
    char pool[33], worker[33];
    int sent;
    int wait;
};
int sandbox_kill_sent(struct rconn *rc, const char *ws, const char *sbid, const char *event,
                      const char *actor, const char *reason, struct kill_sent *out);

/* Applies a worker's report about one of its sandboxes (heartbeat). 1 when
 * it sent the worker a kill for it (a container not, or no longer, its). */
int lifecycle_report(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                     const char *state, const char *reason);

/* Declares a worker dead (force: even if its lease has not run out): running
 * sandboxes become lost, pending ones are placed again. 1 if this call did it;
 * then it records the death and the losses, by actor. */
int worker_declare_dead(struct rconn *rc, const struct sched_conf *c, const char *pool,
                        const char *wid, int force, const char *actor);

/* The sweeps. Each returns how many things it acted on, or -1. */
int sweep_dead_workers(struct rconn *rc, const struct sched_conf *c, const char *pool);
/* Kills creates whose waiting handler's lease lapsed (it died). */
int sweep_abandoned_waits(struct rconn *rc, const char *ws);
int sweep_abandoned_creates(struct rconn *rc, const char *ws);
int sweep_worker_slots(struct rconn *rc, const char *pool, long min_age_ms);

#endif
