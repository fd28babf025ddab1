/* subvol_drop.h: a container's btrfs subvolumes emptied in O(1) before
 * dockerd removes it (decision 0086).
 *
 * dockerd's btrfs driver walks a container's whole file tree (every file of
 * its image: 13,500 in corral/base) looking for nested subvolumes before it
 * deletes one, twice per container (its layer and its init layer): 0.3 s of
 * dockerd CPU and as much of the kernel's per removal, most of what a
 * sandbox costs the host under a steady load (issue 34). Each subvolume is
 * destroyed here instead (the kernel frees it in the background) and an
 * empty one put in its place, which dockerd then walks and deletes at once.
 * Best effort: anything unexpected leaves the container to dockerd's own way. */
#ifndef CORRAL_SUBVOL_DROP_H
#define CORRAL_SUBVOL_DROP_H

#include "docker_api.h"

/* Turned on when dockerd's storage driver is btrfs and its data root is at
 * hand on this host; logs which. */
void subvol_drop_init(struct docker *d, int enabled);

/* 1 when on. */
int subvol_drop_on(void);

/* Empties the subvolumes of container id (its full 64-hex id), whose
 * processes are gone or about to be by dockerd's forced removal. 1 emptied,
 * 0 left to dockerd. */
int subvol_drop(const char *id);

/* How many containers this thread emptied so, since it last asked. */
int subvol_drop_taken(void);

#endif
