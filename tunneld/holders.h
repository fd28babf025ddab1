/* holders.h: which worker's tunnel holds which of the daemon's ports.
 *
 * One slot per port of corral.conf's tunnel_ports. A worker that reconnects
 * gets the port it had when it is free, so that routes the gateways cached
 * (2 s) still lead to it; a worker that connects while its old tunnel is
 * still held ends the old one first (the newest tunnel wins, as in the
 * record). A renewal thread keeps each slot's Redis record alive and ends a
 * tunnel whose record another gateway host has taken (decision 0087). */
#ifndef TUNNELD_HOLDERS_H
#define TUNNELD_HOLDERS_H

#include "rconn.h"

struct holder {
    int in_use;
    char worker[33], pool[33];
    char last_worker[33]; /* who held it last: a returning worker's port */
    int stop_fd;          /* eventfd: written to end the tunnel */
    int recorded;         /* its record was written */
    char addr[48];        /* "127.0.0.1:7100": the port's address */
};

/* ip: the address to listen on and record; ports lo..hi; rc: the store,
 * shared under a lock. 0, -1. */
int holders_init(const char *ip, unsigned lo, unsigned hi, struct rconn *rc);
/* How many ports (slots) the daemon has. */
size_t holders_count(void);
/* A slot for worker, its old tunnel ended first, none that skip marks (the
 * holders_count() bytes of ports this worker found taken by another
 * process): its index, or -1 (no free port, or the old one did not end
 * within 5 s). */
int holders_take(const char *worker, const char *pool, const unsigned char *skip);
/* The slot's record written (or its failure noted for the renewal to retry). */
void holders_record(int i);
/* The slot given back, its record deleted if still its own. */
void holders_put(int i);
/* A copy of slot i (its addr and stop_fd are what a tunnel needs). */
void holders_get(int i, struct holder *out);
/* Ends every tunnel and waits (up to 3 s) for their records to be deleted,
 * so that no gateway keeps routing to a daemon that stopped. */
void holders_stop_all(void);
/* Starts the renewal thread. 0, -1. */
int holders_start_renewal(void);

#define TUNNEL_RECORD_TTL_MS 15000
#define TUNNEL_RENEW_MS 5000

#endif
