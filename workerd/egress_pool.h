/* egress_pool.h: egress proxies, with their internal networks, made ahead
 * of need.
 *
 * Making a network, a proxy container, joining it to the egress network and
 * starting it is what an egress policy added to a create, and dockerd does it
 * beside the sandbox's own container only slowly. So a few wait ready: each an
 * internal network (corral-p-<id>-<worker>-int) with its proxy on it as
 * EGRESS_ALIAS and on the egress network, started, with a config directory of
 * its own bind-mounted read-only, listening on nothing until a config file
 * appears there (corral-egress -config-file). A create with a policy takes
 * one: renames the container corral-<sandbox>-<worker>-egress (the name kill
 * removes), renames the directory after the sandbox, writes the sandbox id and
 * policy into the file, and puts the sandbox's container on that network. A
 * thread of its own makes replacements when creates pause. Each network and
 * proxy serves exactly one sandbox, for its whole life. Decision 0024. */
#ifndef WORKERD_EGRESS_POOL_H
#define WORKERD_EGRESS_POOL_H

#include "docker_api.h"
#include "worker_conf.h"

#include <jansson.h>

#define EGRESS_POOL_PREFIX "p-" /* a ready proxy's id: its network's sandbox label */

/* Removes what an earlier run left (ready proxies, config directories of
 * sandboxes that are gone) and starts the refill thread, keeping `size`
 * proxies ready (0: no pool; every proxy is made per create). 0, or -1. */
int egress_pool_start(const struct worker_conf *c, const char *wid, int size);
void egress_pool_stop(void);
/* After enrolling under a new worker id (the old one's containers, ready
 * proxies included, are removed): the pool starts again under wid. */
int egress_pool_restart(const char *wid);

/* Gives sandbox sbid a ready proxy: 0 with net the internal network its
 * container must join (also when it had one already: a create delivered
 * again); 2 none ready (make them the slow way); 1 refused (err); -1 dockerd
 * down. */
int egress_pool_take(struct docker *d, const char *sbid, json_t *policy, char *net, size_t netlen,
                     char *err, size_t errlen);

/* dockerd came back (events thread): the ready proxies that no longer run
 * are removed with their networks, and the refill thread makes new ones.
 * egress_pool_take checks each one it hands out all the same. */
void egress_pool_recheck(struct docker *d);

/* A create is starting: replacements wait until creates have paused for a
 * second (dockerd making a proxy beside a starting sandbox slowed the
 * sandbox by ~300 ms, all a ready proxy saves). */
void egress_pool_busy(void);

/* Removes what the pool gave sandbox sbid: its proxy, its network (once the
 * sandbox's container is gone) and its directory. 0 when all is gone (or it
 * had none); -1 when dockerd kept something: the directory stays, naming the
 * network, so that the caller's retry finds it. */
int egress_pool_forget(struct docker *d, const char *sbid);

#endif
