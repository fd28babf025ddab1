/* snapshots.h: a sandbox's filesystem committed as an image on this worker
 * (decision 0048), and such images removed. Only images named
 * corral-snap:<id> and labelled with this worker are ever touched or used. */
#ifndef WORKERD_SNAPSHOTS_H
#define WORKERD_SNAPSHOTS_H

#include "docker_api.h"

#include <stddef.h>

/* Commits sbid's container as image (corral-snap:<id>), without the sandbox's
 * envd token or proxy settings. 0; 1 refused (err says why); -1 dockerd did
 * not answer. */
int snapshot_commit(struct docker *d, const char *wid, const char *sbid, const char *ws,
                    const char *image, char *err, size_t errlen);

/* Removes image; one that is gone is removed. 0, 1 refused, -1 no answer. */
int snapshot_image_remove(struct docker *d, const char *wid, const char *image, char *err,
                          size_t errlen);

/* 0 when image is one of this worker's snapshots (a create may use it). */
int snapshot_image_ours(struct docker *d, const char *wid, const char *image, char *err,
                        size_t errlen);

/* Removes this worker's snapshot images that lost their name (deleted while
 * sandboxes made from them still ran) and that no container uses any more.
 * How many such images are left (still in use); 1 when it cannot tell. */
int snapshot_images_prune(struct docker *d, const char *wid);

/* 1 when name is spelled as a snapshot image, corral-snap:snap-<20 hex>. Pure. */
int snapshot_image_name_ok(const char *name);

#endif
