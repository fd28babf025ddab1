/* rsentinel.h: where the Redis primary is, asked of Redis Sentinel (decision
 * 0058). hiredis has no Sentinel client; this is the part rconn needs. */
#ifndef CORRAL_RSENTINEL_H
#define CORRAL_RSENTINEL_H

#include <stddef.h>

struct rconn;

/* Asks rc's sentinels, from the last one that answered, for the address of
 * rc->master_name. 0 with host and port set, or -1 (none answered). */
int sentinel_primary(struct rconn *rc, char *host, size_t hostlen, int *port);

/* Checks with ROLE that rc's fresh connection is a primary: a sentinel's word
 * lags a failover by a moment. 0, or -1 with the connection closed. */
int check_primary(struct rconn *rc);

/* The i-th "host:port" (or "[v6]:port") of a comma-separated list: 0, or -1
 * when there is no i-th or it is malformed. Pure, for the unit tests. */
int sentinel_entry(const char *list, unsigned i, char *host, size_t hostlen, int *port);

#endif
