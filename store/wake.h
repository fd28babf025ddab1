/* wake.h: one waiter woken by another process, through a Redis list: the
 * waker pushes a message (kept ttl_ms, so a wake that comes before the wait
 * is not lost), the waiter pops it, blocking. A create waiting for its worker
 * (sandbox_wait.c) and a kill waiting for its worker's confirmation
 * (commands.c, decision 0073) both wait this way. */
#ifndef CORRAL_WAKE_H
#define CORRAL_WAKE_H

#include "rconn.h"

#include <stddef.h>

/* 0, -1 Redis. */
int wake_push(struct rconn *rc, const char *key, const char *msg, int ttl_ms);
/* Blocks up to block_ms. 1 woken (msg, when given, holds the message), 0 not
 * in time, -1 Redis. */
int wake_wait(struct rconn *rc, const char *key, int block_ms, char *msg, size_t msglen);

#endif
