/* layer_prune.h: the layer cache (layer_cache.h) kept to a bounded age. */
#ifndef WORKERD_LAYER_PRUNE_H
#define WORKERD_LAYER_PRUNE_H

#include "docker_api.h"

/* Removes this worker's cached layers made more than max_age_s ago that no
 * container uses (dockerd's image prune), never a snapshot image (which
 * inherits corral.layer from its sandbox's image). max_age_s 0: nothing.
 * Returns the images removed, or -1 (dockerd down or busy: the next build
 * tries again). */
int layer_cache_prune(struct docker *d, const char *wid, long max_age_s);

#endif
