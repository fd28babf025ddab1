/* tunnel_dial.h: the worker's tunnel connection opened (decision 0087).
 *
 * One TLS connection to control_url, trusting only ca_file, as the control
 * channel's; on it `GET /v1/worker/tunnel` with `Upgrade: corral-tunnel/1`
 * and the join token, worker id and secret in headers (nginx's auth_request
 * checks them). After the 101 the connection is raw bytes: the HTTP/2 bridge
 * reads and writes it through tunnel_io (libcurl's TLS). */
#ifndef WORKERD_TUNNEL_DIAL_H
#define WORKERD_TUNNEL_DIAL_H

#include "h2bridge.h"
#include "state_file.h"
#include "worker_conf.h"

#include <curl/curl.h>

struct tunnel_conn {
    CURL *curl;
    int fd;
};

/* 0 connected and upgraded; otherwise -1 with why (no secret in it) and
 * *status the answer's status (0 when none: the network or TLS). */
int tunnel_dial(const struct worker_conf *c, const struct worker_identity *id,
                struct tunnel_conn *out, long *status, char *why, size_t whylen);
void tunnel_hangup(struct tunnel_conn *t);
/* The bridge's view of the connection. */
void tunnel_io(struct tunnel_conn *t, struct h2b_io *io);

#endif
