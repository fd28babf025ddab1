/* command_poll.h: the worker's end of its command stream (commands.h is the
 * control plane's end): what a heartbeat acknowledges, reads, reclaims and
 * waits for. Delivery is at least once: a command read through the consumer
 * group stays pending until the worker acknowledges it (decision 0006). */
#ifndef CORRAL_COMMAND_POLL_H
#define CORRAL_COMMAND_POLL_H

#include "rconn.h"

#include <stddef.h>

struct command {
    char id[48];         /* the stream entry's id: what the worker acknowledges */
    char type[16];       /* create, kill, ... */
    char *sandbox;       /* a create's sandbox as JSON text (malloc'd), or NULL */
    char sandbox_id[33]; /* the sandbox a kill (or the like) names, or "" */
    char *args;          /* a snapshot's or image removal's arguments, JSON text, or NULL */
};

struct command_batch {
    size_t n, cap;
    struct command *v;
};
void command_batch_free(struct command_batch *b);

/* Acknowledges and deletes one command (the worker applied it, or it must
 * never be delivered). 0, or -1 when Redis failed. */
int command_ack(struct rconn *rc, const char *pool, const char *wid, const char *id);

/* Without waiting: "0" reads every command still pending (a resume after a
 * restart), ">" only new ones. 0, or -1. */
int command_read(struct rconn *rc, const char *pool, const char *wid, const char *from,
                 struct command_batch *out);
/* Commands pending for idle_ms or more (the poll that took them is gone). */
int command_reclaim(struct rconn *rc, const char *pool, const char *wid, int idle_ms,
                    struct command_batch *out);
/* The long-poll: waits up to wait_ms for new commands, and takes them only
 * while this poll is the worker's latest. 0 (out may be empty), or -1. */
int command_wait(struct rconn *rc, const char *pool, const char *wid, long long wait_ms,
                 struct command_batch *out);

#endif
