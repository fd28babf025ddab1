/* registry_gc.h: the registry keeps only what templates use (decision 0081).
 * A deleted template's manifests are deleted at once; corralctl registry-gc
 * then deletes every workspace manifest no kept build names (a replaced
 * build's, a deleted template's that the first delete missed) and lets the
 * registry's garbage-collect free the blobs nothing names any more. */
#ifndef CORRAL_SCHED_REGISTRY_GC_H
#define CORRAL_SCHED_REGISTRY_GC_H

#include "corral_conf.h"
#include "rconn.h"

#include <stddef.h>

struct registry_gc_report {
    int repos;   /* workspace repositories looked at */
    int kept;    /* manifests a kept build names */
    int deleted; /* manifests deleted */
    int failed;  /* calls that failed (the next collection tries again) */
};

/* Every manifest of template tpl's repository in ws: deleted. 0, or -1 (err). */
int registry_template_forget(const struct corral_conf *conf, const char *ws, const char *tpl,
                             char *err, size_t errlen);

/* Every manifest of a workspace's repository that no kept build of its
 * template names is deleted (the fleet's repositories are the operator's and
 * stay). 0, or -1 when the catalog could not be read or Redis failed (err);
 * r counts what was done. */
int registry_gc_manifests(struct rconn *rc, const struct corral_conf *conf,
                          struct registry_gc_report *r, char *err, size_t errlen);

#endif
