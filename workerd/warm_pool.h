/* warm_pool.h: sandboxes started ahead of need, claimed by creates
 * (decision 0082).
 *
 * A warm sandbox is a container of a (template, runtime) of workerd.conf's
 * warm_pool, named corral-warm_<hex>-<wid>, labelled corral.role=warm and
 * corral.sandbox=warm_<hex>, on a network of its own with every wall, whose
 * envd runs -warm: it serves nothing until it is claimed. It belongs to
 * nobody, is never reported, and is removed when workerd starts or its
 * worker id changes (its init secret lived in memory only).
 *
 * A claim binds one to a sandbox: <state_dir>/warm/<sandbox id> records its
 * warm id, container id, init secret and init body (0600: the access token
 * is in it, as it is in a cold sandbox's container config), warm_index.h
 * learns it, its limits are set (unless it was made with them), and envd is
 * told over POST /init. From then on containers_name finds it by its
 * container id and containers_sbid_of its sandbox through the index; its
 * labels still say warm. The rename to the sandbox's name, for people and
 * tools, follows in the refill thread. */
#ifndef WORKERD_WARM_POOL_H
#define WORKERD_WARM_POOL_H

#include "containers.h"
#include "docker_api.h"
#include "probe.h"
#include "worker_conf.h"

#include <jansson.h>

#define WARM_PREFIX "warm_"

/* Starts the refill thread (nothing when warm_pool lists nothing). rts: the
 * runtimes probed, for each warm sandbox's tier. 0, or -1. */
int warm_pool_start(const struct worker_conf *c, const struct host_caps *caps, const char *wid,
                    const struct runtime *rts, int n_rts);
void warm_pool_stop(void);
/* A new worker id: the warm sandboxes of the old one removed, refilled. */
int warm_pool_restart(const char *wid);

/* A cold create begins (1) or ends (0) on this worker: no refill starts
 * while one runs, so a burst the pool cannot serve is not slowed by its
 * refills; between creates the pool refills at once. */
void warm_pool_cold(int begins);

/* Claims a warm sandbox for create sb when one fits (its template, runtime
 * and tier; no image, build, start, egress policy or volumes; the default
 * disk size). 0 claimed (st running), 2 none fits or the claim failed and was
 * undone (a cold create follows), -1 dockerd down. */
int warm_pool_claim(struct docker *d, const char *wid, json_t *sb, struct ctr_state *st);

/* After a claimed sandbox's container started again (a resume without
 * memory), its envd is warm again: told once more. 0, or -1. Nothing (0)
 * for a sandbox that was not claimed. */
int warm_pool_reinit(struct docker *d, const char *wid, const char *sbid);

/* At a kill: a claimed sandbox's container and network (labelled with its
 * warm id), then its record. 0, or -1 dockerd down. */
int warm_pool_forget(struct docker *d, const char *wid, const char *sbid);

/* The warm sandboxes ready now, per kind: [{template, runtime, size, ready}]. */
json_t *warm_pool_view(void);

#endif
