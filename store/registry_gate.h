/* registry_gate.h: the registry's pushes and its garbage collection kept
 * apart (decision 0081). The distribution registry's garbage-collect may
 * delete a blob a push has uploaded but whose manifest it has not yet
 * written, so a collection first holds new push tokens (build_push_admit
 * answers -2) and then waits until no push token it knows of is still in
 * flight. */
#ifndef CORRAL_REGISTRY_GATE_H
#define CORRAL_REGISTRY_GATE_H

#include "rconn.h"

/* Holds new pushes for ttl_s (so a collector that dies lets them go) and
 * answers how many push tokens are still in flight at now_s: n >= 0, or -1. */
int registry_gc_hold(struct rconn *rc, long ttl_s, long long now_s);
/* Lets pushes go again: 0, -1. */
int registry_gc_release(struct rconn *rc);

#endif
