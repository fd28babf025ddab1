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
 *     proxy): bridged traffic between the two only, nothing routed (a packet
 *     is bridged when its destination's route leaves by the bridge it came
 *     in on: the fib rule; br_netfilter shows both kinds to the same hook);
 *   - the networks of the host's own interfaces (its LAN, whatever range it
 *     is in) are blocked like the private ranges;
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

#define NETGUARD_MAX_LAN 32

struct netguard_dns {
    char v4[NETGUARD_MAX_DNS][64];
    char v6[NETGUARD_MAX_DNS][64];
    int n4, n6;
};

/* The networks of the host's own interfaces, "192.0.2.0/24" (host bits zero). */
struct netguard_lan {
    char v4[NETGUARD_MAX_LAN][64];
    char v6[NETGUARD_MAX_LAN][64];
    int n4, n6;
};

/* The nameservers of a resolv.conf text; loopback ones are skipped (they are
 * the host's stub, never reached from a sandbox). Pure. */
void netguard_parse_resolv(const char *text, struct netguard_dns *out);

/* Adds "a,b,c" (IPv4 or IPv6 literals) to out. 0, or -1 naming the bad one. */
int netguard_parse_list(const char *list, struct netguard_dns *out, char *err, size_t errlen);

/* The host's interface networks now (netguard_lan.c): every interface but
 * loopback and sandbox bridges (crl*, cri*: inside the blocked pools). */
void netguard_host_lan(struct netguard_lan *out);

/* Adds the network of addr/prefix (family AF_INET or AF_INET6, addr its
 * bytes) to out, host bits cleared, unless it is there already. Pure. */
void netguard_lan_add(struct netguard_lan *out, int family, const unsigned char *addr, int prefix);

/* 1 when a and b list the same networks in the same order. Pure. */
int netguard_lan_same(const struct netguard_lan *a, const struct netguard_lan *b);

/* The whole ruleset as one nft script (replaces the table atomically); a
 * malloc'ed string. Pure. */
char *netguard_ruleset(const struct netguard_dns *dns, const struct netguard_lan *lan);

/* Installs the ruleset, then checks it is in place. 0, or -1 with err. */
int netguard_install(const struct netguard_dns *dns, const struct netguard_lan *lan, char *err,
                     size_t errlen);

/* 0 when the table and its hooks are in place; -1 (err says what is missing). */
int netguard_check(char *err, size_t errlen);

#endif
