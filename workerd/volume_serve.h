/* volume_serve.h: one request of the volume file API, answered on a thread of
 * its own (decision 0071). The data port hands over the connection once the
 * request's signature (under this worker's data key, from corral-api) checked
 * out; here the request is parsed (volume_req.c), the volume's directory
 * found, the operation done inside it (volume_files.c) and answered, and the
 * connection closed. */
#ifndef WORKERD_VOLUME_SERVE_H
#define WORKERD_VOLUME_SERVE_H

#include "dataport_head.h"

#include <stddef.h>

#define VOLUME_SERVE_MAX 16 /* requests at once; more are answered 503 */

/* The directory of Docker volume dname, workspace ws's on this worker, into
 * dir. 0, or an HTTP status with why (403 not ws's here, 503 dockerd). */
typedef int (*volume_root_fn)(void *ud, const char *dname, const char *ws, char *dir, size_t len,
                              char *why, size_t whylen);

/* Takes fd (non-blocking; closed here, whatever happens) and copies h's
 * values and in (len bytes: the head, then what came of the body). Never
 * blocks: the work is on a detached thread. */
void volume_serve_start(int fd, const struct dataport_head *h, const char *in, size_t len,
                        volume_root_fn root, void *ud);

#endif
