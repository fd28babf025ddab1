/* outbound.h: the connection to a destination already judged: directly to
 * one of the addresses that were allowed, or, with an upstream, through that
 * SOCKS5 proxy (never directly when it fails). */
#ifndef CORRAL_EGRESS_OUTBOUND_H
#define CORRAL_EGRESS_OUTBOUND_H

#include "egress_conf.h"

#include <stddef.h>

struct dest {
    const char *shown;            /* the host as the client wrote it */
    const char *name;             /* normalized host name; NULL for an IP literal */
    const struct ipaddr *literal; /* the literal, or NULL */
    const struct ipaddr *ok;      /* the judged and allowed addresses */
    size_t n_ok;
    unsigned port;
};

/* A connected non-blocking socket, ready for the destination's bytes, with
 * *used the index in d->ok of the address dialled (0 through an upstream).
 * -1 with *reason (one word, for the log) and msg (for the client): neither
 * ever holds the upstream's password. */
int outbound_dial(const struct egress_conf *conf, const struct upstream *u, const struct dest *d,
                  size_t *used, const char **reason, char *msg, size_t msglen);

#endif
