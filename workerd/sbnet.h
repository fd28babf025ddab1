/* sbnet.h: each sandbox's own Docker networks.
 *
 * A sandbox without an egress policy gets one bridge network of its own
 * (open: routed out through the host, walled by netguard.h). A sandbox with a
 * policy gets an internal network (no route out) shared only with its egress
 * proxy; the proxies reach out on one open network, the host's egress network
 * (corral-egress, shared by the workerds of one dockerd). Proxies are no sandbox: they run our
 * code, and they refuse every private destination, which is all their neighbours are. So no two
 * sandboxes ever share a segment, and the host's bridges carry the prefix netguard's rules match
 * on. A sandbox's networks carry the labels corral.sandbox and corral.worker, so a kill removes
 * them with the containers; the egress network has no sandbox label and stays. */
#ifndef WORKERD_SBNET_H
#define WORKERD_SBNET_H

#include "docker_api.h"

#include <stddef.h>

#define SBNET_IF_OPEN "crl"
#define SBNET_IF_INTERNAL "cri"
#define SBNET_NAME_MAX 160
#define SBNET_IF_MAX 16 /* IFNAMSIZ */

enum sbnet_kind { SBNET_OPEN, SBNET_INTERNAL, SBNET_EGRESS };

/* The Docker network name of a sandbox's network of kind k (SBNET_EGRESS:
 * the host's egress network; sbid and wid are ignored). Pure. */
void sbnet_name(char *out, size_t len, const char *sbid, const char *wid, enum sbnet_kind k);

/* Its bridge's interface name: the kind's prefix and 12 hex digits of a hash
 * of the network name (15 characters, the kernel's limit). Pure. */
void sbnet_bridge(char *out, size_t len, const char *netname, enum sbnet_kind k);

/* Creates the network unless it exists (subnet: its addresses, or NULL for
 * one from dockerd's pools) (a create delivered again; for
 * SBNET_EGRESS, any start of a worker after the first; sbid and wid ignored). 0; 1 when
 * dockerd refused (err says why: address pools exhausted, ...); -1 when
 * dockerd did not answer. */
int sbnet_ensure(struct docker *d, const char *wid, const char *sbid, enum sbnet_kind k,
                 const char *subnet, char *err, size_t errlen);

#endif
