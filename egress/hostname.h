/* hostname.h: what counts as a DNS host name here. Pure. */
#ifndef CORRAL_EGRESS_HOSTNAME_H
#define CORRAL_EGRESS_HOSTNAME_H

#include <stddef.h>

#define HOSTNAME_MAX 253

/* Copies `in` lowercased, without one trailing dot, into out[HOSTNAME_MAX+1].
 * Refuses (-1) anything but labels of 1..63 letters, digits, '-' and '_'. */
int hostname_normalize(const char *in, char *out);

/* A name the proxy may hand to getaddrinfo: its last label starts with a
 * letter, as every top-level domain does. getaddrinfo would read "2130706433"
 * or "0x7f.1" as an IPv4 number: a literal in disguise. */
int hostname_resolvable(const char *name);

#endif
