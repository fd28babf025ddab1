/* volume_relay.h: one request of the volume file API carried to the data port
 * of the worker that holds the volume, and its answer back (decision 0071). */
#ifndef CORRAL_VOLUME_RELAY_H
#define CORRAL_VOLUME_RELAY_H

#include "data_addr.h"
#include "request.h"

struct volume_target {
    char addr[DATA_ADDR_CANON]; /* the worker's data port, checked against worker_data_* */
    char key[256];              /* its data key: what the signature is made with */
    char dname[64];             /* the Docker volume */
    char ws[33];                /* whose it is: the worker checks the volume's label */
};

/* 1 when a query string may go to the worker as it came: only the characters
 * of a percent-encoded query (no space, '#' or control character). */
int volume_relay_query_ok(const char *query);

/* 1 when the worker's error status goes to the client as it is, with the
 * worker's message: what workerd/volume_files.c and volume_serve.c answer
 * for the request itself (400, 404, 409, 411, 413, 503 and 507, the volume's
 * disk full). Any other (a 403 of labels, a 500) is the worker's fault: 502. */
int volume_relay_passes(long status);

/* Sends req's method, path, query and body (body_len bytes, read from nginx
 * as they go) to t, signed, and answers req: a success with the worker's
 * status and body, an error as {code, message}, an unreachable worker 503.
 * Needs curl_global_init. */
void volume_relay(struct request *req, const struct volume_target *t, long long body_len);

#endif
