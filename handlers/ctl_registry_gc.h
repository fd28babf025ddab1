/* ctl_registry_gc.h: corralctl registry-gc (decision 0081). */
#ifndef CORRAL_CTL_REGISTRY_GC_H
#define CORRAL_CTL_REGISTRY_GC_H

#include "corral_conf.h"
#include "rconn.h"

/* Deletes the manifests no template keeps, then (on the registry's host,
 * with registry_config readable) holds pushes, waits at most wait_s for those
 * in flight, and runs the registry's garbage-collect. Prints a JSON report
 * on stdout; 0, or 1 when something failed (the report says what). */
int ctl_registry_gc(struct rconn *rc, const struct corral_conf *conf, long wait_s);

#endif
