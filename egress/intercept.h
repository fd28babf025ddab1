/* intercept.h: a CONNECT to a host with rules. The proxy answers 200, is a
 * TLS server to the client (a leaf for the host, signed by the configured
 * CA) and a TLS client to the real server (SNI, chain verified against
 * `roots`, name checked), and sets the rule's headers on every request the
 * client sends on the connection. */
#ifndef CORRAL_EGRESS_INTERCEPT_H
#define CORRAL_EGRESS_INTERCEPT_H

#include "http_head.h"
#include "ipaddr.h"
#include "live.h"

#include <stdbool.h>

struct icpt {
    int cli, up; /* the client's socket, and the server's (connected, no byte sent) */
    const struct live *live;
    const struct rule_set *set;
    const struct http_req *req; /* the CONNECT: method, host and port for the log */
    const char *host;           /* normalized name or IP literal: SNI, checks, leaf */
    bool literal;
    const struct ipaddr *addr; /* the address dialled, for the log */
};

/* Runs the connection to its end; closes neither socket. */
void intercept_run(const struct icpt *ic);

/* The relay of an intercepted connection whose handshakes are done
 * (tls_relay.c). */
void tls_relay_run(SSL *cli, SSL *srv, const struct icpt *ic);

#endif
