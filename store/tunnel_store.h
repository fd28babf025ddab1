/* tunnel_store.h: which tunnel daemon holds a worker's tunnel (decision
 * 0087). The daemon that accepted the tunnel writes its own address for it
 * ("127.0.0.1:7100") with a ttl it renews; the route lookup reads it. The
 * newest tunnel wins: a daemon whose record was taken over by another stops
 * renewing, and its release deletes only its own. */
#ifndef CORRAL_TUNNEL_STORE_H
#define CORRAL_TUNNEL_STORE_H

#include "rconn.h"

#include <stddef.h>

/* The marker a tunnelled worker's record holds as its data_addr. */
#define TUNNEL_DATA_ADDR "tunnel"

/* Records addr as the holder of (pool, wid)'s tunnel for ttl_ms. 0, -1. */
int tunnel_record_set(struct rconn *rc, const char *pool, const char *wid, const char *addr,
                      long ttl_ms);
/* Renews it if addr still holds it (or writes it again if it expired): 1
 * renewed, 0 another holds it, -1 Redis failed. */
int tunnel_record_renew(struct rconn *rc, const char *pool, const char *wid, const char *addr,
                        long ttl_ms);
/* Deletes it if addr still holds it. 0, -1. */
int tunnel_record_release(struct rconn *rc, const char *pool, const char *wid, const char *addr);
/* The holder's address into out: 1 found, 0 none, -1 Redis failed. */
int tunnel_record_get(struct rconn *rc, const char *pool, const char *wid, char *out, size_t cap);

#endif
