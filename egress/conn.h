/* conn.h: one client connection on its own detached thread. */
#ifndef CORRAL_EGRESS_CONN_H
#define CORRAL_EGRESS_CONN_H

#include "egress_conf.h"
#include "live.h"

#include <stdbool.h>

#define CONN_MAX 512

/* Serves fd (non-blocking, now owned) on a new thread, under `live` (a
 * reference the connection now owns and releases when it ends). False when
 * CONN_MAX are already running or no thread could start: fd is then answered
 * 503 and closed here, without blocking the accept loop. */
bool conn_start(int fd, const struct egress_conf *conf, struct live *live);

#endif
