/* admission.h: the workspace's concurrent sandbox limit, checked and reserved
 * atomically across every handler process by one Lua script. */
#ifndef CORRAL_ADMISSION_H
#define CORRAL_ADMISSION_H

#include "rconn.h"

#include <stdint.h>

/* 1 admitted, 0 over the limit (*limit set: the workspace's, capped by ceiling),
 * -1 Redis failed. The reservation lapses by itself at deadline_ms unless
 * admission_activate() makes it last. */
int admission_reserve(struct rconn *rc, const char *ws, const char *sbid, int64_t deadline_ms,
                      long ceiling, long *limit);
int admission_release(struct rconn *rc, const char *ws, const char *sbid);
/* Count of live reservations and running sandboxes. */
long admission_count(struct rconn *rc, const char *ws);

#endif
