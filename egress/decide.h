/* decide.h: may this sandbox reach (host, port)? E2B's semantics: allow wins
 * over deny, the default is allow, and the blocked ranges (addr_class.h) are
 * refused whatever the policy says. Pure: resolution happens in between. */
#ifndef CORRAL_EGRESS_DECIDE_H
#define CORRAL_EGRESS_DECIDE_H

#include "ipaddr.h"
#include "policy.h"

#include <stddef.h>

enum verdict {
    V_ALLOW,
    V_RESOLVE,        /* decide_name_early: the answer depends on the addresses */
    V_DENY_NAME,      /* the policy does not allow this name */
    V_DENY_LITERAL,   /* the policy does not allow this IP literal */
    V_DENY_PRIVATE,   /* a blocked range */
    V_CANNOT_RESOLVE, /* no address at all */
};

/* An IP literal: allowed iff an allow CIDR covers it, or no deny CIDR does
 * and the policy is not deny-all. */
enum verdict decide_literal(const struct policy *p, const struct ipaddr *a);

/* Before resolving a (normalized) name: V_ALLOW by an allow name entry,
 * V_DENY_NAME when a deny name entry matches or when no address could be
 * allowed (deny-all without an allow CIDR), else V_RESOLVE. Refusing before
 * resolving keeps a denied name's queries (a DNS side channel) off the wire. */
enum verdict decide_name_early(const struct policy *p, const char *name);

/* After resolving: `early` is decide_name_early's answer. Any blocked address
 * refuses the name. Otherwise the addresses the policy allows are copied to
 * `ok` (at most n), in order; none is V_DENY_NAME. */
enum verdict decide_name_addrs(const struct policy *p, enum verdict early,
                               const struct ipaddr *addrs, size_t n, struct ipaddr *ok,
                               size_t *n_ok);

/* A -test-host stand-in (egress_conf.h) at address a: as decide_name_addrs,
 * but its loopback address is the point of it, so only the policy judges. */
enum verdict decide_stand_in(const struct policy *p, enum verdict early, const struct ipaddr *a,
                             struct ipaddr *ok, size_t *n_ok);

#endif
