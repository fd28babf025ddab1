/* volume.h: a workspace's volumes (decision 0049): Docker volumes on one
 * worker, chosen when the volume is made, that sandboxes of the workspace
 * mount; a create that mounts one is pinned to that worker. */
#ifndef CORRAL_VOLUME_H
#define CORRAL_VOLUME_H

#include "scheduler.h"
#include "volume_names.h"

#include <jansson.h>
#include <stddef.h>

struct volume_record {
    char id[VOLUME_ID_MAX], name[65], pool[33], worker[33];
    long long created_at;
};

/* Makes ws's volume name on the worker a create would choose now. 0 (out
 * filled), or -1 with err (409 the name is taken, 503 no worker / Redis). */
int volume_create(struct rconn *rc, const struct sched_conf *c, const char *ws, const char *name,
                  const char *actor, struct volume_record *out, struct sched_error *err);
/* 1 found, 0 absent, -1 Redis. */
int volume_read(struct rconn *rc, const char *ws, const char *id, struct volume_record *out);
/* ws's volumes; free(*out). 0 or -1. */
int volume_list(struct rconn *rc, const char *ws, struct volume_record **out, size_t *n);
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
