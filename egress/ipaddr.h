/* ipaddr.h: one representation of an IPv4 or IPv6 address for the policy, the
 * blocked-range test and the dialer. IPv4-mapped IPv6 (::ffff:a.b.c.d) is
 * stored as the IPv4 address it names: the kernel connects it to that IPv4
 * address, so every rule must judge it as one. */
#ifndef CORRAL_EGRESS_IPADDR_H
#define CORRAL_EGRESS_IPADDR_H

#include "egress_rule.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define IPADDR_STRLEN 46 /* INET6_ADDRSTRLEN */

struct ipaddr {
    int family;          /* AF_INET or AF_INET6 */
    unsigned char b[16]; /* network order; AF_INET uses b[0..3] */
};

/* A numeric literal (inet_pton only: no "127.1", no octal, no zone ids). */
int ipaddr_parse(const char *s, struct ipaddr *out);
/* The network of a CIDR entry common/egress_rule.c parsed (a bare address is
 * its own /32 or /128), with IPv4-mapped ranges folded to IPv4. */
void ipaddr_from_rule(const struct egress_rule *r, struct ipaddr *net, int *bits);
void ipaddr_from_sockaddr(const struct sockaddr *sa, struct ipaddr *out);
socklen_t ipaddr_to_sockaddr(const struct ipaddr *a, unsigned port, struct sockaddr_storage *ss);
bool ipaddr_in_prefix(const struct ipaddr *a, const struct ipaddr *net, int bits);
void ipaddr_format(const struct ipaddr *a, char *buf, size_t n);

#endif
