/* egress_pool.h: egress proxies started ahead of need.
 *
 * Creating and starting a proxy container is most of what an egress policy
 * adds to a create, so a few wait ready: started on the egress network only,
 * each with a config directory of its own bind-mounted read-only, listening on
 * nothing until a config file appears there (corral-egress -config-file). A
 * create with a policy takes one: writes its sandbox id and policy into that
 * file, renames the container corral-<sandbox>-<worker>-egress (the name kill
 * removes) and connects it to the sandbox's internal network as
 * EGRESS_ALIAS. A thread of its own starts replacements. Each proxy still
 * serves exactly one sandbox. Decision 0024. */
#ifndef WORKERD_EGRESS_POOL_H
#define WORKERD_EGRESS_POOL_H

#include "docker_api.h"
#include "worker_conf.h"

#include <jansson.h>

/* Removes what an earlier run left (ready proxies, config directories of
 * sandboxes that are gone) and starts the refill thread, keeping `size`
 * proxies ready (0: no pool; every proxy is made per create). 0, or -1. */
int egress_pool_start(const struct worker_conf *c, const char *wid, int size);
void egress_pool_stop(void);
/* After enrolling under a new worker id (the old one's containers, ready
 * proxies included, are removed): the pool starts again under wid. */
int egress_pool_restart(const char *wid);

/* Gives sandbox sbid a ready proxy. 0 done (or it had one already); 2 none
 * ready (make one the slow way); 1 refused (err); -1 dockerd down. */
int egress_pool_take(struct docker *d, const char *sbid, json_t *policy, char *err, size_t errlen);

/* Removes sandbox sbid's config directory (its proxy is gone). */
void egress_pool_forget(const char *sbid);

#endif
