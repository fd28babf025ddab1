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
    return 0;
}

typedef int (*add_fn)(struct data_addr_allow *, const char *, char *, size_t);

/* Replaces one of a's lists (its length *n) with the space/comma separated
 * tokens of list, each added by add; an empty list is refused. */
static int parse_list(const char *list, add_fn add, size_t *n, const char *what,
                      struct data_addr_allow *a, char *err, size_t errlen)
{
    char *copy = strdup(list), *save = NULL, *tok;
    int rv = 0;

    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *n = 0;
    for (tok = strtok_r(copy, " ,\t", &save); tok && rv == 0; tok = strtok_r(NULL, " ,\t", &save))
        rv = add(a, tok, err, errlen);
    free(copy);
    if (rv == 0 && *n == 0) {
        snprintf(err, errlen, "lists no %s", what);
        rv = -1;
    }
    return rv;
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
    return parse_list(list, add_net, &a->nnets, "network", a, err, errlen);
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
    return parse_list(list, add_ports, &a->nports, "port", a, err, errlen);
}

void data_addr_defaults(struct data_addr_allow *a)
{
    char err[128];

    memset(a, 0, sizeof(*a));
    /* constants known to parse */
    (void)data_addr_networks(a, DATA_ADDR_DEFAULT_NETS, err, sizeof(err));
    (void)data_addr_ports(a, DATA_ADDR_DEFAULT_PORTS, err, sizeof(err));
}

#define SHAPE "must be an IP address and a port, 10.0.0.5:7001 or [fd12::5]:7001 (no host name)"

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

int data_addr_check(const struct data_addr_allow *a, const char *addr, size_t len, char *canon,
                    char *why, size_t whylen)
{
    struct egress_rule ip;
    unsigned port = 0;
    char text[INET6_ADDRSTRLEN];
    int n;

    if (parse_hostport(addr, len, &ip, &port) != 0) {
        snprintf(why, whylen, SHAPE);
        return -1;
    }
    inet_ntop(ip.family, ip.addr, text, sizeof(text));
    n = never_index(&ip, 0);
    if (n >= 0) {
        snprintf(why, whylen, "%s is %s, never a worker address", text, never[n].what);
        return -1;
    }
    if (!net_allowed(a, &ip)) {
        snprintf(why, whylen, "%s is outside the networks allowed for worker data ports", text);
        return -1;
    }
    if (!port_allowed(a, port)) {
        snprintf(why, whylen, "port %u is outside the ports allowed for worker data ports", port);
        return -1;
    }
    if (canon)
        snprintf(canon, DATA_ADDR_CANON, ip.family == AF_INET ? "%s:%u" : "[%s]:%u", text, port);
    return 0;
}
