/* netguard.h: the host's rules that wall sandboxes off, in nftables.
 *
 * Every sandbox sits alone on its own Docker bridge (sbnet.h), so no frame of
 * one sandbox ever reaches another's segment. What remains is routed traffic,
 * and one table, `inet corral`, owns it, matched on bridge-name prefixes so the
 * rule set stays the same size whatever the number of sandboxes:
 *   - from an open sandbox bridge (crl*): nothing to private, loopback,
 *     link-local, CGNAT, multicast or reserved addresses (DNS to the host's own
 *     resolvers excepted), public open, masqueraded as the host;
 *   - into an open bridge: only answers (nothing new, from another sandbox or
 *     from anywhere else);
 *   - from an internal bridge (cri*: a sandbox with an egress policy and its
 *     proxy): bridged traffic between the two only, nothing routed;
 *   - to the host itself from either: only answers to connections the host
 *     opened (workerd -> envd), so no port of the host is reachable.
 * The table is separate from Docker's, so Docker rewriting its own chains
 * (restarts, new networks) never touches it, and it does not need them: it
 * holds with dockerd's iptables management on or off. */
#ifndef WORKERD_NETGUARD_H
#define WORKERD_NETGUARD_H

#include <stddef.h>

#define NETGUARD_TABLE "corral"
#define NETGUARD_MAX_DNS 8

struct netguard_dns {
    char v4[NETGUARD_MAX_DNS][64];
    char v6[NETGUARD_MAX_DNS][64];
    int n4, n6;
};

/* The nameservers of a resolv.conf text; loopback ones are skipped (they are
 * the host's stub, never reached from a sandbox). Pure. */
void netguard_parse_resolv(const char *text, struct netguard_dns *out);

/* Adds "a,b,c" (IPv4 or IPv6 literals) to out. 0, or -1 naming the bad one. */
int netguard_parse_list(const char *list, struct netguard_dns *out, char *err, size_t errlen);

/* The whole ruleset as one nft script (replaces the table atomically); a
 * malloc'ed string. Pure. */
char *netguard_ruleset(const struct netguard_dns *dns);

/* Installs the ruleset, then checks it is in place. 0, or -1 with err. */
int netguard_install(const struct netguard_dns *dns, char *err, size_t errlen);

/* 0 when the table and its hooks are in place; -1 (err says what is missing). */
int netguard_check(char *err, size_t errlen);

#endif
