/* netsweep.h: sandbox networks left without a sandbox, removed.
 *
 * The main thread sweeps at its first reconciliation and whenever dockerd
 * answers again, and only when no command runs on another thread (a create
 * in flight has its network before its container). */
#ifndef WORKERD_NETSWEEP_H
#define WORKERD_NETSWEEP_H

#include "docker_api.h"

/* Removes this worker's sandbox networks that no container of it carries
 * the sandbox label of (the pools' own excepted). 0, or -1 when dockerd did
 * not answer or refused a removal (to be tried again). */
int netsweep_orphans(struct docker *d, const char *wid);

#endif
