/* server.h: what every handler thread shares (read-only config, the long-poll
 * budget) and what it owns (its Redis connection). */
#ifndef CORRAL_SERVER_H
#define CORRAL_SERVER_H

#include "corral_conf.h"
#include "rconn.h"
#include "scheduler.h"

#include <stdatomic.h>

struct server {
    struct corral_conf conf;
    struct sched_conf sched;
    int listen_fd;
    atomic_int longpolls;     /* heartbeats currently blocked in Redis */
    atomic_int create_waits;  /* creates currently waiting for their worker */
    atomic_int volume_relays; /* volume file requests being carried (h_volume_content.c) */
};

struct worker_thread {
    struct server *srv;
    struct rconn rc; /* one per thread: hiredis contexts are not thread-safe */
};

#endif
