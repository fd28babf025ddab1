/* socks5.h: a connection to the destination through the SOCKS5 upstream,
 * on a socket already connected to it. */
#ifndef CORRAL_EGRESS_SOCKS5_H
#define CORRAL_EGRESS_SOCKS5_H

#include "ipaddr.h"
#include "settings.h"

#include <stdint.h>

/* Greets (authenticating when u has credentials) and asks for a CONNECT to
 * name, or to *literal when not NULL, port. 0, or -1 with *why naming the
 * failure (never the password). */
int socks5_open(int fd, const struct upstream *u, const char *name, const struct ipaddr *literal,
                unsigned port, int64_t deadline, const char **why);

#endif
