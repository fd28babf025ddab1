/* resolve.h: a name's addresses, both families, resolved once. The proxy
 * connects only to addresses returned here and then judged, never to a
 * second lookup, so a DNS answer that changes (rebinding) changes nothing. */
#ifndef CORRAL_EGRESS_RESOLVE_H
#define CORRAL_EGRESS_RESOLVE_H

#include "ipaddr.h"

#include <stddef.h>

#define RESOLVE_MAX 16

/* The number of distinct addresses stored in out (0: cannot resolve). */
size_t resolve_name(const char *name, struct ipaddr *out, size_t max);

#endif
