/* egress_proxy.h: the egress proxy beside a sandbox that has an egress policy.
 *
 * One proxy container per such sandbox (corral-<sandbox>-<worker>-egress): the
 * corral-egress binary (egress/) bind-mounted read-only into the
 * egress image, running as nobody with no capability and a read-only root,
 * attached to the sandbox's internal network (as EGRESS_ALIAS) and to the
 * worker's egress network (sbnet.h), which must exist. It is the sandbox's one way out and enforces
 * the policy of its directory (egress_dir.h), which its caller writes first:
 * the policy holds secrets, never on a command line. */
#ifndef WORKERD_EGRESS_PROXY_H
#define WORKERD_EGRESS_PROXY_H

#include "docker_api.h"
#include "worker_conf.h"

#include <jansson.h>
#include <pthread.h>

#define EGRESS_MOUNT "/.corral/egress"
#define EGRESS_CONF_DIR "/run/corral-egress" /* a ready proxy's config directory, read-only */

/* The proxy's container name: corral-<id>-<wid>-egress, id a sandbox's (or a
 * pooled proxy's, egress_pool.h). */
void egress_proxy_name(char *out, size_t len, const char *id, const char *wid);

/* Creates, connects and starts the proxy of sandbox sbid (idempotent: a
 * create delivered again finds it). 0; 1 refused (err); -1 dockerd down. */
int egress_proxy_start(struct docker *d, const struct worker_conf *c, const char *wid,
                       const char *sbid, char *err, size_t errlen);

/* The same on network net, the one the sandbox's container is on: a proxy
 * made anew with a new policy (decision 0074) where the pool gave the first. */
int egress_proxy_start_on(struct docker *d, const struct worker_conf *c, const char *wid,
                          const char *sbid, const char *net, char *err, size_t errlen);

/* The same on a thread of its own (with its own dockerd connection), so that
 * the proxy comes up while the sandbox's container is created and started:
 * start it once the internal network exists, join it before the sandbox is
 * reported. The join gives what egress_proxy_start would have, err included. */
struct egress_job {
    pthread_t th;
    const struct worker_conf *c;
    const char *wid, *sbid;
    int rc;
    int pooled; /* the proxy came ready from the pool: no thread to join */
    char err[256];
};
int egress_proxy_spawn(struct egress_job *j);
int egress_proxy_join(struct egress_job *j);

/* The body of its POST /containers/create. Pure. */
json_t *egress_proxy_body(const struct worker_conf *c, const char *wid, const char *sbid);
/* The same for a ready proxy of the pool (egress_pool.h): on its internal
 * network, its sandbox and policy to come in confdir/config. Pure. */
json_t *egress_pool_body(const struct worker_conf *c, const char *wid, const char *confdir,
                         const char *network);

#endif
