/* sandbox_body.h: the Engine API body that creates a sandbox's container.
 *
 * Least privilege: the container keeps only the capabilities envd and the
 * SDK's operations need (sudo, apt, chown, kill, binding low ports); NET_RAW
 * (raw and packet sockets: ARP and IP spoofing), MKNOD, SETFCAP, SETPCAP and
 * SYS_CHROOT are dropped. It has a pids limit and, where dockerd's storage
 * supports it, a size limit on its writable layer; both come with the create
 * (the workspace's settings) or fall back to the defaults here. It is attached
 * to its own network only (sbnet.h); with an egress policy, that network is
 * internal and the proxy variables point at the sandbox's proxy. */
#ifndef WORKERD_SANDBOX_BODY_H
#define WORKERD_SANDBOX_BODY_H

#include "worker_conf.h"

#include <jansson.h>

#define SANDBOX_PIDS_DEFAULT 1024
#define SANDBOX_DISK_MB_DEFAULT 10240
/* The proxy's name on the sandbox's internal network, and its port. */
#define EGRESS_ALIAS "corral-egress"
#define EGRESS_PORT_STR "3128"

/* In a sandbox with an egress proxy: its proxy's CA, and the bundle envd makes
 * hold it (decision 0091). */
#define SANDBOX_EGRESS_CA "/.corral/egress-ca.pem"
#define SANDBOX_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

struct sandbox_net {
    const char *network; /* the one network the container is attached to */
    int via_proxy;       /* 1: egress only through the proxy (HTTP(S)_PROXY set) */
    int disk_quota;      /* 1: dockerd can limit the writable layer (StorageOpt size) */
};

/* The variables that send a sandbox's HTTP(S) traffic through its proxy,
 * appended to arr: "NAME=value" (on), or "NAME" alone (off: envd's -net-env
 * form for unsetting them, decision 0074). */
void sandbox_proxy_env(json_t *arr, int on);

/* What an image committed from a sandbox keeps of its environment: not its
 * envd token (the sandboxes made from it get their own, or none) nor a proxy
 * it may not have. dockerd's commit merges the container's variables back
 * in, so they are appended overridden empty ("NAME=") rather than left out:
 * snapshots and build layers alike. */
void sandbox_env_blanked(json_t *arr);

/* The cpu, memory and pids limits of sandbox sb, as a container update's
 * body (a warm sandbox's, set when it is claimed: decision 0082). */
json_t *sandbox_limits(json_t *sb);

/* The body of POST /containers/create for the create command's sandbox sb. */
json_t *sandbox_body(const struct worker_conf *c, const struct wtemplate *t, const char *wid,
                     json_t *sb, const struct sandbox_net *net);

#endif
