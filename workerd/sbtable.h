/* sbtable.h: what this worker last knew and told about its sandboxes.
 *
 * The main thread owns it: reconciliation with dockerd and applied commands
 * update it, a successful heartbeat clears the "dirty" marks of what it
 * carried. The events thread only asks whether a sandbox is expected to be
 * running (to decide if a "die" deserves cutting the long-poll short), hence
 * the mutex. Sizes are bounded by the slots, so a flat array is enough. */
#ifndef WORKERD_SBTABLE_H
#define WORKERD_SBTABLE_H

#include "containers.h"

#include <pthread.h>

struct sb_entry {
    struct ctr_state st;
    int dirty; /* changed since last told to the control plane */
    int seen;  /* present in the latest listing (reconciliation scratch) */
    int drop;  /* no container behind it: forget it once reported */
};

struct sbtable {
    pthread_mutex_t mu;
    struct sb_entry *v;
    int n, cap;
};

void sbtable_init(struct sbtable *t);
void sbtable_free(struct sbtable *t);
/* Records st; marks it dirty when state or reason changed. -1 out of memory. */
int sbtable_put(struct sbtable *t, const struct ctr_state *st);
struct sb_entry *sbtable_get(struct sbtable *t, const char *sbid);
void sbtable_del(struct sbtable *t, const char *sbid);
/* Running or paused: holding a slot, expected to stay. */
int sbtable_live(const struct sb_entry *e);
/* Sandboxes holding a slot (running or paused). */
int sbtable_count_running(struct sbtable *t);
/* 1 when something changed that the control plane has not been told. */
int sbtable_any_dirty(struct sbtable *t);
/* Thread-safe: records st and marks it to be reported (a create is always
 * answered); drop: forget it once reported. -1 out of memory. */
int sbtable_record(struct sbtable *t, const struct ctr_state *st, int drop);
/* Thread-safe: copies sbid's tier into out (left as is when unknown). */
void sbtable_tier(struct sbtable *t, const char *sbid, char *out, size_t len);
/* Thread-safe: 1 when sbid is recorded at all. */
int sbtable_has(struct sbtable *t, const char *sbid);
/* Thread-safe: 1 when sbid is recorded as running or paused. */
int sbtable_expect_running(struct sbtable *t, const char *sbid);
/* Thread-safe: the ids of up to max sandboxes recorded as running; how many. */
int sbtable_running_ids(struct sbtable *t, char (*ids)[CTR_ID_MAX], int max);

#endif
