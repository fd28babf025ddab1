/* volumes.h: a sandbox's volumes on this worker (decision 0049): Docker
 * volumes named corral-vol-<id>, labelled with this worker and the
 * workspace, made at the first mount and removed when their record is. */
#ifndef WORKERD_VOLUMES_H
#define WORKERD_VOLUMES_H

#include "docker_api.h"

#include <jansson.h>
#include <stddef.h>

/* Makes sure every volume the create sb mounts exists here and is its
 * workspace's. 0; 1 refused (err says why); -1 dockerd did not answer. */
int volumes_prepare(struct docker *d, const char *wid, json_t *sb, char *err, size_t errlen);

/* The directory of volume name of workspace ws on this host (dockerd's
 * Mountpoint), the volume made first when it does not exist yet, as at a
 * first mount (decision 0071). 0; 1 refused (not ws's on this worker: err);
 * -1 dockerd did not answer, or the volume has no directory here. */
int volumes_mountpoint(struct docker *d, const char *wid, const char *ws, const char *name,
                       char *out, size_t len, char *err, size_t errlen);

/* HostConfig.Mounts for sb's volumes (a new reference; an empty array when none). */
json_t *volumes_mounts(json_t *sb);

/* Removes volume name of workspace ws; a missing one is removed. 0, 1
 * refused (not ours, or in use), -1 no answer. */
int volumes_remove(struct docker *d, const char *wid, const char *ws, const char *name, char *err,
                   size_t errlen);

#endif
