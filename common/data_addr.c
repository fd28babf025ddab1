#include "data_addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Never a worker's data port, whatever the operator lists. A range (whole) may
 * not even overlap a listed network: "0.0.0.0/0" or "169.0.0.0/8" is refused at
 * load. A single metadata host inside a range an operator may well use
 * (Alibaba's in CGNAT, EC2's IPv6 one in ULA space) is only refused itself. */
static const struct {
    const char *cidr, *what;
    int whole;
} never[] = {
    {"0.0.0.0/8", "unspecified (0.0.0.0/8)", 1},
    {"169.254.0.0/16", "link-local, where cloud metadata answers (169.254.0.0/16)", 1},
    {"224.0.0.0/4", "multicast (224.0.0.0/4)", 1},
    {"240.0.0.0/4", "reserved or broadcast (240.0.0.0/4)", 1},
    {"::/128", "unspecified (::)", 1},
    {"::ffff:0:0/96", "IPv4-mapped (::ffff:0:0/96)", 1},
    {"64:ff9b::/96", "NAT64, an IPv4 address in disguise (64:ff9b::/96)", 1},
    {"fe80::/10", "link-local (fe80::/10)", 1},
    {"ff00::/8", "multicast (ff00::/8)", 1},
    {"100.100.100.200/32", "a cloud metadata address (Alibaba)", 0},
    {"fd00:ec2::254/128", "a cloud metadata address (EC2 IPv6)", 0},
};

#define NEVER_N (sizeof(never) / sizeof(never[0]))

/* Where the gateway host's own services listen (Redis, workerd's data port, a
 * Docker API). Allowed only as the exact address:port pairs an operator lists,
 * never inside a listed network: with the network's port range every one of
 * those services would be a worker's "data port" (issue 25, decision 61). */
static const char *const loopback[] = {"127.0.0.0/8", "::1/128"};

#define LOOPBACK_N (sizeof(loopback) / sizeof(loopback[0]))

static int inside(const struct egress_rule *outer, const struct egress_rule *inner)
{
    return outer->prefix <= inner->prefix &&
           egress_rule_contains(outer, inner->family, inner->addr);
}

/* The never-entry that refuses net (an address is a /32 or /128), or -1. */
static int never_index(const struct egress_rule *net, int whole_overlap)
{
    struct egress_rule r;

    for (size_t i = 0; i < NEVER_N; i++) {
        if (egress_rule_parse(never[i].cidr, &r) != 0)
            continue;
        if (inside(&r, net) || (whole_overlap && never[i].whole && inside(net, &r)))
            return (int)i;
    }
    return -1;
}

/* The loopback range net overlaps (either inside the other), or NULL. */
static const char *loopback_overlap(const struct egress_rule *net)
{
    struct egress_rule r;

    for (size_t i = 0; i < LOOPBACK_N; i++)
        if (egress_rule_parse(loopback[i], &r) == 0 && (inside(&r, net) || inside(net, &r)))
            return loopback[i];
    return NULL;
}

static int host_bits_zero(const struct egress_rule *r)
{
    int len = r->family == AF_INET ? 4 : 16;

    for (int bit = r->prefix; bit < len * 8; bit++)
        if (r->addr[bit / 8] & (0x80 >> (bit % 8)))
            return 0;
    return 1;
}

static int parse_net(const char *tok, struct egress_rule *r, char *err, size_t errlen)
{
    const char *lo;
    int n;

    if (egress_rule_parse(tok, r) != 0 || r->kind != EGRESS_RULE_CIDR) {
        snprintf(err, errlen, "%s: not an IP network (10.0.0.0/8, fd12:3456::/48)", tok);
        return -1;
    }
    if (!host_bits_zero(r)) {
        snprintf(err, errlen, "%s: host bits are set after the /%d", tok, r->prefix);
        return -1;
    }
    n = never_index(r, 1);
    if (n >= 0) {
        snprintf(err, errlen, "%s: covers %s, never a worker address", tok, never[n].what);
        return -1;
    }
    if ((lo = loopback_overlap(r)) != NULL) {
        snprintf(err, errlen,
                 "%s: overlaps loopback (%s), the gateway host's own services: list a worker's "
                 "data port there as an exact address, 127.0.0.1:7001",
                 tok, lo);
        return -1;
    }
    return 0;
}

typedef int (*add_fn)(struct data_addr_allow *, const char *, char *, size_t);

/* Adds each space/comma separated token of list to a with add; the number of
 * tokens, or -1 with err. */
static int each_token(const char *list, add_fn add, struct data_addr_allow *a, char *err,
                      size_t errlen)
{
    char *copy = strdup(list), *save = NULL, *tok;
    int n = 0;

    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (tok = strtok_r(copy, " ,\t", &save); tok && n >= 0; tok = strtok_r(NULL, " ,\t", &save))
        n = add(a, tok, err, errlen) == 0 ? n + 1 : -1;
    free(copy);
    return n;
}

/* each_token, refusing an empty list ("lists no WHAT"). */
static int nonempty_list(const char *list, add_fn add, const char *what, struct data_addr_allow *a,
                         char *err, size_t errlen)
{
    int n = each_token(list, add, a, err, errlen);

    if (n == 0)
        snprintf(err, errlen, "lists no %s", what);
    return n > 0 ? 0 : -1;
}

static int add_net(struct data_addr_allow *a, const char *tok, char *err, size_t errlen)
{
    if (a->nnets == DATA_ADDR_MAX_NETS) {
        snprintf(err, errlen, "more than %d networks", DATA_ADDR_MAX_NETS);
        return -1;
    }
    return parse_net(tok, &a->nets[a->nnets++], err, errlen);
}

int data_addr_networks(struct data_addr_allow *a, const char *list, char *err, size_t errlen)
{
    a->nnets = 0;
    return nonempty_list(list, add_net, "network", a, err, errlen);
}

/* A port 1..65535 without sign or leading zero; 0 when malformed. */
static unsigned parse_port(const char *s, size_t len)
{
    unsigned n = 0;

    if (len == 0 || len > 5 || s[0] == '0')
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        n = n * 10 + (unsigned)(s[i] - '0');
    }
    return n <= 65535 ? n : 0;
}

static int add_ports(struct data_addr_allow *a, const char *tok, char *err, size_t errlen)
{
    const char *dash = strchr(tok, '-');
    unsigned lo, hi;

    lo = parse_port(tok, dash ? (size_t)(dash - tok) : strlen(tok));
    hi = dash ? parse_port(dash + 1, strlen(dash + 1)) : lo;
    if (lo == 0 || hi < lo) {
        snprintf(err, errlen, "%s: not a port or a range LOW-HIGH of ports 1-65535", tok);
        return -1;
    }
    if (a->nports == DATA_ADDR_MAX_PORTS) {
        snprintf(err, errlen, "more than %d port ranges", DATA_ADDR_MAX_PORTS);
        return -1;
    }
    a->port_lo[a->nports] = (unsigned short)lo;
    a->port_hi[a->nports++] = (unsigned short)hi;
    return 0;
}

int data_addr_ports(struct data_addr_allow *a, const char *list, char *err, size_t errlen)
{
    a->nports = 0;
    return nonempty_list(list, add_ports, "port", a, err, errlen);
}

#define SHAPE                                                                                      \
    "must be an IP address and a port, 10.0.0.5:7001 or [fd12::5]:7001 (no host name), or a "      \
    "range of ports, 127.0.0.1:7100-7163"

/* "IPv4:port" or "[IPv6]:port" into ip (a /32 or /128) and port. */
static int parse_hostport(const char *s, size_t len, struct egress_rule *ip, unsigned *port)
{
    char buf[DATA_ADDR_CANON], *host, *colon;
    size_t hlen;

    if (len == 0 || len >= sizeof(buf) || memchr(s, '\0', len))
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    colon = strrchr(buf, ':');
    if (!colon)
        return -1;
    *port = parse_port(colon + 1, strlen(colon + 1));
    host = buf;
    hlen = (size_t)(colon - buf);
    if (buf[0] == '[') { /* the brackets, and nothing else, around an IPv6 address */
        if (hlen < 3 || buf[hlen - 1] != ']')
            return -1;
        host++;
        hlen -= 2;
    } else if (memchr(buf, ':', hlen)) {
        return -1;
    }
    host[hlen] = '\0';
    memset(ip, 0, sizeof(*ip));
    ip->kind = EGRESS_RULE_CIDR;
    ip->family = buf[0] == '[' ? AF_INET6 : AF_INET;
    ip->prefix = ip->family == AF_INET ? 32 : 128;
    return *port && inet_pton(ip->family, host, ip->addr) == 1 ? 0 : -1;
}

/* tok's port part, "7001" or "7100-7163", into lo and hi; hostport gets tok
 * with "-HIGH" cut off. 0, or -1 when malformed. */
static int split_range(const char *tok, char *hostport, size_t cap, unsigned *hi)
{
    const char *colon = strrchr(tok, ':'), *dash = colon ? strchr(colon, '-') : NULL;
    size_t len = dash ? (size_t)(dash - tok) : strlen(tok);

    if (len >= cap)
        return -1;
    memcpy(hostport, tok, len);
    hostport[len] = '\0';
    *hi = dash ? parse_port(dash + 1, strlen(dash + 1)) : 0;
    return dash && !*hi ? -1 : 0;
}

static int add_addr(struct data_addr_allow *a, const char *tok, char *err, size_t errlen)
{
    struct egress_rule *ip = &a->addrs[a->naddrs];
    char hostport[DATA_ADDR_CANON];
    unsigned port = 0, hi = 0;
    int n;

    if (a->naddrs == DATA_ADDR_MAX_ADDRS) {
        snprintf(err, errlen, "more than %d addresses", DATA_ADDR_MAX_ADDRS);
        return -1;
    }
    if (split_range(tok, hostport, sizeof(hostport), &hi) != 0 ||
        parse_hostport(hostport, strlen(hostport), ip, &port) != 0 || (hi && hi < port)) {
        snprintf(err, errlen, "%s: " SHAPE, tok);
        return -1;
    }
    n = never_index(ip, 0);
    if (n >= 0) {
        snprintf(err, errlen, "%s: %s, never a worker address", tok, never[n].what);
        return -1;
    }
    a->addr_port_hi[a->naddrs] = (unsigned short)(hi ? hi : port);
    a->addr_port[a->naddrs++] = (unsigned short)port;
    return 0;
}

int data_addr_addrs(struct data_addr_allow *a, const char *list, char *err, size_t errlen)
{
    a->naddrs = 0;
    return nonempty_list(list, add_addr, "address", a, err, errlen);
}

/* "127.0.0.1:7001" and "[::1]:7001" are addresses; a network has no colon
 * (IPv4) or several and no bracket (IPv6). */
static int add_entry(struct data_addr_allow *a, const char *tok, char *err, size_t errlen)
{
    const char *colon = strchr(tok, ':');
    int addr = tok[0] == '[' || (colon && !strchr(colon + 1, ':'));

    return addr ? add_addr(a, tok, err, errlen) : add_net(a, tok, err, errlen);
}

int data_addr_entries(struct data_addr_allow *a, const char *list, char *err, size_t errlen)
{
    a->nnets = a->naddrs = 0;
    return nonempty_list(list, add_entry, "network or address", a, err, errlen);
}

void data_addr_defaults(struct data_addr_allow *a)
{
    char err[128];

    memset(a, 0, sizeof(*a));
    /* constants known to parse */
    (void)data_addr_addrs(a, DATA_ADDR_DEFAULT_ADDRS, err, sizeof(err));
    (void)data_addr_ports(a, DATA_ADDR_DEFAULT_PORTS, err, sizeof(err));
}

static int addr_listed(const struct data_addr_allow *a, const struct egress_rule *ip, unsigned port)
{
    int len = ip->family == AF_INET ? 4 : 16;

    for (size_t i = 0; i < a->naddrs; i++)
        if (a->addr_port[i] <= port && port <= a->addr_port_hi[i] &&
            a->addrs[i].family == ip->family &&
            memcmp(a->addrs[i].addr, ip->addr, (size_t)len) == 0)
            return 1;
    return 0;
}

static int on_loopback(const struct egress_rule *ip)
{
    struct egress_rule r;

    for (size_t i = 0; i < LOOPBACK_N; i++)
        if (egress_rule_parse(loopback[i], &r) == 0 &&
            egress_rule_contains(&r, ip->family, ip->addr))
            return 1;
    return 0;
}

static int port_allowed(const struct data_addr_allow *a, unsigned port)
{
    for (size_t i = 0; i < a->nports; i++)
        if (port >= a->port_lo[i] && port <= a->port_hi[i])
            return 1;
    return 0;
}

static int net_allowed(const struct data_addr_allow *a, const struct egress_rule *ip)
{
    for (size_t i = 0; i < a->nnets; i++)
        if (egress_rule_contains(&a->nets[i], ip->family, ip->addr))
            return 1;
    return 0;
}

/* -1 with why when a does not allow ip:port (text and full: the address and
 * both, printed), else 0. A listed address:port is allowed as it is; loopback
 * only so, never through a network, were one to cover it (decision 61). */
static int refused_by(const struct data_addr_allow *a, const struct egress_rule *ip, unsigned port,
                      const char *text, const char *full, char *why, size_t whylen)
{
    int n = never_index(ip, 0);

    if (n < 0 && addr_listed(a, ip, port))
        return 0;
    if (n >= 0)
        snprintf(why, whylen, "%s is %s, never a worker address", text, never[n].what);
    else if (on_loopback(ip))
        snprintf(why, whylen,
                 "%s is on loopback and not a listed worker data address (loopback is allowed "
                 "only as exact address:port pairs)",
                 full);
    else if (!net_allowed(a, ip))
        snprintf(why, whylen, "%s is outside the networks allowed for worker data ports", text);
    else if (!port_allowed(a, port))
        snprintf(why, whylen, "port %u is outside the ports allowed for worker data ports", port);
    else
        return 0;
    return -1;
}

int data_addr_check(const struct data_addr_allow *a, const char *addr, size_t len, char *canon,
                    char *why, size_t whylen)
{
    struct egress_rule ip;
    unsigned port = 0;
    char text[INET6_ADDRSTRLEN], full[DATA_ADDR_CANON];

    if (parse_hostport(addr, len, &ip, &port) != 0) {
        snprintf(why, whylen, SHAPE);
        return -1;
    }
    inet_ntop(ip.family, ip.addr, text, sizeof(text));
    snprintf(full, sizeof(full), ip.family == AF_INET ? "%s:%u" : "[%s]:%u", text, port);
    if (refused_by(a, &ip, port, text, full, why, whylen) != 0)
        return -1;
    if (canon)
        snprintf(canon, DATA_ADDR_CANON, "%s", full);
    return 0;
}
