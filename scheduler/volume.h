/* volume.h: a workspace's volumes (decision 0049): Docker volumes on one
 * worker, chosen when the volume is made, that sandboxes of the workspace
 * mount; a create that mounts one is pinned to that worker. */
#ifndef CORRAL_VOLUME_H
#define CORRAL_VOLUME_H

#include "sched_error.h"
#include "volume_store.h"
#include "volume_names.h"

#include <jansson.h>
#include <stddef.h>

struct sandbox_spec; /* scheduler.h */
struct sched_conf;   /* scheduler.h */

/* Makes ws's volume name on the worker a create would choose now. 0 (out
 * filled), or -1 with err (409 the name is taken, 503 no worker / Redis). */
int volume_create(struct rconn *rc, const struct sched_conf *c, const char *ws, const char *name,
                  const char *actor, struct volume_record *out, struct sched_error *err);
/* Deletes ws's volume id and, on its worker, its Docker volume. 1, 0 absent,
 * 2 a live sandbox mounts it (nothing done), -1 Redis. */
int volume_delete(struct rconn *rc, const char *ws, const char *id, const char *actor);

/* A create's mounts [{name, path}] (validated by the parser) as the worker's
 * [{volume, path}] in spec->volumes_json, the create pinned to their worker.
 * 0, or -1 with err (404 no such volume in ws, 409 volumes on different
 * workers, or on another than the snapshot's). */
int volume_resolve(struct rconn *rc, const char *ws, struct sandbox_spec *spec,
                   struct sched_error *err);

#endif
