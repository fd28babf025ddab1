/* data_addr.h: which address a worker's data port may have. A worker tells the
 * control plane its data_addr at the handshake and the gateway (nginx) connects
 * there for every request to the worker's sandboxes, so an unchecked address
 * makes the gateway a proxy into the operator's network (issue 14, decision
 * 32). The operator lists the networks and ports worker data ports live on
 * (corral.conf worker_data_networks / worker_data_ports, and the module's
 * corral_upstream_allow); corral-api checks an address at the handshake and the
 * module checks it again before it connects, with this one function.
 * Pure (libc only): the nginx module compiles it too. */
#ifndef CORRAL_DATA_ADDR_H
#define CORRAL_DATA_ADDR_H

#include "egress_rule.h"

#include <stddef.h>

#define DATA_ADDR_MAX_NETS 32
#define DATA_ADDR_MAX_PORTS 16
#define DATA_ADDR_CANON 48 /* "[" + 39 + "]:65535" + NUL */
#define DATA_ADDR_DEFAULT_NETS "127.0.0.0/8 ::1/128"
#define DATA_ADDR_DEFAULT_PORTS "1024-65535"

struct data_addr_allow {
    struct egress_rule nets[DATA_ADDR_MAX_NETS]; /* CIDRs only */
    size_t nnets;
    unsigned short port_lo[DATA_ADDR_MAX_PORTS], port_hi[DATA_ADDR_MAX_PORTS];
    size_t nports;
};

/* Replaces a's networks with list ("10.0.0.0/8 fd12:3456::/48", spaces or
 * commas). Refuses a malformed entry, one with host bits set, and one that
 * overlaps a range never allowed (link-local, metadata, unspecified, multicast,
 * broadcast, IPv4-mapped, NAT64), naming it. 0, or -1 with err. */
int data_addr_networks(struct data_addr_allow *a, const char *list, char *err, size_t errlen);

/* Replaces a's ports with list ("1024-65535", "7001 8000-8100"). 0, or -1. */
int data_addr_ports(struct data_addr_allow *a, const char *list, char *err, size_t errlen);

/* The defaults above: loopback only, unprivileged ports. */
void data_addr_defaults(struct data_addr_allow *a);

/* 0 when addr (len bytes, no NUL needed) is "IPv4:port" or "[IPv6]:port", an
 * IP literal and a port inside a; canon (if not NULL, DATA_ADDR_CANON bytes)
 * gets its canonical form. Otherwise -1 with why (no secret in it: it may be
 * answered to the worker and logged). */
int data_addr_check(const struct data_addr_allow *a, const char *addr, size_t len, char *canon,
                    char *why, size_t whylen);

#endif
