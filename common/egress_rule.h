/* egress_rule.h: one entry of an egress policy ("example.com", "*.example.com",
 * "8.8.8.8", "2001:db8::/32"), the shape E2B's allowOut/denyOut take. Parsed by
 * corral-api when a policy is set and by the worker's proxy that enforces it, so
 * both read an entry the same way. Pure (libc only). */
#ifndef CORRAL_EGRESS_RULE_H
#define CORRAL_EGRESS_RULE_H

#include <stddef.h>

#define EGRESS_RULE_MAX_LIST 256 /* entries per allow or deny list */

enum egress_rule_kind {
    EGRESS_RULE_NAME = 1,     /* an exact host name */
    EGRESS_RULE_WILDCARD = 2, /* "*.example.com": any name under example.com */
    EGRESS_RULE_CIDR = 4,     /* an IPv4/IPv6 address (a /32 or /128) or a CIDR */
};

struct egress_rule {
    enum egress_rule_kind kind;
    int family;             /* AF_INET or AF_INET6 (CIDR only) */
    unsigned char addr[16]; /* network address, 4 or 16 bytes (CIDR only) */
    int prefix;             /* prefix length (CIDR only) */
};

/* 0 with r filled, or -1 when text is neither a host name, a "*." wildcard, an
 * IP address nor a CIDR. */
int egress_rule_parse(const char *text, struct egress_rule *r);

/* 1 when every address of the CIDR rule r is private, loopback, link-local or
 * CGNAT (the ranges a worker always refuses); 0 otherwise (and for names). */
int egress_rule_is_private(const struct egress_rule *r);

/* 1 when the address (4 or 16 bytes of family) is inside the CIDR rule r. */
int egress_rule_contains(const struct egress_rule *r, int family, const unsigned char *addr);

/* A host name of labels [A-Za-z0-9-], optionally "*." prefixed. */
int valid_domain(const char *s);

#endif
