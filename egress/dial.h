/* dial.h: connect to the first of the checked addresses that answers. */
#ifndef CORRAL_EGRESS_DIAL_H
#define CORRAL_EGRESS_DIAL_H

#include "ipaddr.h"

#include <stddef.h>

/* A connected non-blocking socket, or -1. Each address gets timeout_ms; *used
 * is the index of the one that answered. */
int dial_first(const struct ipaddr *addrs, size_t n, unsigned port, int timeout_ms, size_t *used);

#endif
