/* upgrade.h: the request nginx hands corral-tunneld, checked (pure: no I/O).
 *
 * nginx proxies a worker's `GET /v1/worker/tunnel` with `Upgrade:
 * corral-tunnel/1` here only after its auth_request to corral-api passed,
 * and sets X-Corral-Tunnel-Worker and X-Corral-Tunnel-Pool itself from that
 * answer (a worker's own copies of them are replaced), so they name the
 * worker the join token, id and secret proved (decision 0087). */
#ifndef TUNNELD_UPGRADE_H
#define TUNNELD_UPGRADE_H

#include <stddef.h>

#define UPGRADE_HEAD_MAX 8192
#define UPGRADE_PROTOCOL "corral-tunnel/1"
/* The shared fleet's pool as nginx passes it (an empty header is dropped). */
#define UPGRADE_FLEET_POOL "fleet"

struct upgrade_req {
    char worker[33]; /* a worker id (hex) */
    char pool[33];   /* the join token's workspace, "" for the shared fleet */
};

/* head: the request line and headers up to and including the blank line.
 * 0, or the status to answer (400) with why. */
int upgrade_parse(const char *head, size_t len, struct upgrade_req *out, char *why, size_t whylen);

/* Whether head (len bytes) ends with the blank line that ends a head. */
int upgrade_head_done(const char *head, size_t len);

#endif
