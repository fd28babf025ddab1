/* data_addr.h: which address a worker's data port may have. A worker tells the
 * control plane its data_addr at the handshake and the gateway (nginx) connects
 * there for every request to the worker's sandboxes, so an unchecked address
 * makes the gateway a proxy into the operator's network (issue 14, decision
 * 32). The operator lists where worker data ports are: exact addresses
 * (corral.conf worker_data_addrs, "127.0.0.1:7001") and networks with ports
 * (worker_data_networks / worker_data_ports, for a fleet on a LAN); the
 * module's corral_upstream_allow says the same. Loopback, the gateway host's
 * own services, is allowed only as exact addresses, never inside a network
 * (issue 25, decision 61). corral-api checks an address at the handshake and
 * the module checks it again before it connects, with this one function.
 * Pure (libc only): the nginx module compiles it too. */
#ifndef CORRAL_DATA_ADDR_H
#define CORRAL_DATA_ADDR_H

#include "egress_rule.h"

#include <stddef.h>

#define DATA_ADDR_MAX_NETS 32
#define DATA_ADDR_MAX_PORTS 16
#define DATA_ADDR_MAX_ADDRS 64
#define DATA_ADDR_CANON 48 /* "[" + 39 + "]:65535" + NUL */
/* workerd's own default data_addr: what a one-host install needs, and nothing
 * else of its loopback */
#define DATA_ADDR_DEFAULT_ADDRS "127.0.0.1:7001"
/* a listed network's ports when none are listed: workerd's default data port */
#define DATA_ADDR_DEFAULT_PORTS "7001"

struct data_addr_allow {
    struct egress_rule nets[DATA_ADDR_MAX_NETS]; /* CIDRs only */
    size_t nnets;
    unsigned short port_lo[DATA_ADDR_MAX_PORTS], port_hi[DATA_ADDR_MAX_PORTS];
    size_t nports;
    /* exact IP:port pairs (or IP:LOW-HIGH, a tunnel daemon's ports: decision
     * 0087): the only way a loopback address is allowed */
    struct egress_rule addrs[DATA_ADDR_MAX_ADDRS]; /* each a /32 or /128 */
    unsigned short addr_port[DATA_ADDR_MAX_ADDRS], addr_port_hi[DATA_ADDR_MAX_ADDRS];
    size_t naddrs;
};

/* Replaces a's networks with list ("10.0.0.0/8 fd12:3456::/48", spaces or
 * commas). Refuses a malformed entry, one with host bits set, one that
 * overlaps a range never allowed (link-local, metadata, unspecified, multicast,
 * broadcast, IPv4-mapped, NAT64), and one that overlaps loopback (a port range
 * there would open every service of the gateway host), naming it. 0, or -1
 * with err. */
int data_addr_networks(struct data_addr_allow *a, const char *list, char *err, size_t errlen);

/* Replaces a's ports with list ("7001", "7001 8000-8100"). 0, or -1. */
int data_addr_ports(struct data_addr_allow *a, const char *list, char *err, size_t errlen);

/* Replaces a's exact addresses with list ("127.0.0.1:7001 [::1]:7002", the
 * shape data_addr_check takes; "127.0.0.1:7100-7163" lists an address with a
 * range of ports, as a tunnel daemon's are). Refuses a malformed entry and one never
 * allowed, naming it. 0, or -1 with err. */
int data_addr_addrs(struct data_addr_allow *a, const char *list, char *err, size_t errlen);

/* Replaces a's networks and exact addresses with list, whose entries are
 * either ("10.0.0.0/24 127.0.0.1:7001": the module's corral_upstream_allow).
 * An entry with one colon, or starting with "[", is an address. 0, or -1. */
int data_addr_entries(struct data_addr_allow *a, const char *list, char *err, size_t errlen);

/* The defaults above: workerd's own data port on loopback, no network. */
void data_addr_defaults(struct data_addr_allow *a);

/* 0 when addr (len bytes, no NUL needed) is "IPv4:port" or "[IPv6]:port", an
 * IP literal and a port that a lists exactly, or (not on loopback) inside a
 * listed network and port range; canon (if not NULL, DATA_ADDR_CANON bytes)
 * gets its canonical form. Otherwise -1 with why (no secret in it: it may be
 * answered to the worker and logged). */
int data_addr_check(const struct data_addr_allow *a, const char *addr, size_t len, char *canon,
                    char *why, size_t whylen);

#endif
