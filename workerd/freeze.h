/* freeze.h: pausing a sandbox in place. dockerd's pause freezes the
 * container's cgroup: every process stops where it is and keeps its memory on
 * this host; unpause lets them run on. Nothing is written to disk, so a frozen
 * sandbox survives a restart of workerd (the container stays frozen and the
 * listing says "paused") but not a restart of dockerd or the host (decision
 * 0044). */
#ifndef WORKERD_FREEZE_H
#define WORKERD_FREEZE_H

#include "docker_api.h"

#include <stddef.h>

/* Freezes (freeze 1) or thaws (0) the sandbox's container. Doing what is
 * already done succeeds. 0 done; 1 refused (no such container, or it is not
 * running: err says why); -1 dockerd did not answer. */
int freeze_sandbox(struct docker *d, const char *wid, const char *sbid, int freeze, char *err,
                   size_t errlen);

#endif
