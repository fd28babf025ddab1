/* template_storage.h: the builds a template keeps in the registry, and the
 * bytes a workspace's templates take there (decision 0081). */
#ifndef CORRAL_SCHED_TEMPLATE_STORAGE_H
#define CORRAL_SCHED_TEMPLATE_STORAGE_H

#include "rconn.h"
#include "template_store.h"

#include <jansson.h>

/* Adds to keep (bid -> size in bytes) the builds of t that must stay: its
 * current one, every tagged one, and those waiting or building. With next
 * (a build of t about to be ready): as if it were, its tags moved to it.
 * 0, or -1 (Redis). */
int template_live_builds(struct rconn *rc, const char *ws, const struct template_record *t,
                         const struct build_record *next, json_t *keep);

/* Bytes the workspace's templates' kept builds take (with next as above,
 * for a build about to be ready), or -1 (Redis). */
long long template_storage_used(struct rconn *rc, const char *ws, const struct build_record *next);

#endif
