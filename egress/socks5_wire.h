/* socks5_wire.h: the client's messages of RFC 1928 (CONNECT only) and
 * RFC 1929 (username/password), and the reading of the server's. Pure. */
#ifndef CORRAL_EGRESS_SOCKS5_WIRE_H
#define CORRAL_EGRESS_SOCKS5_WIRE_H

#include "ipaddr.h"

#include <stdbool.h>
#include <stddef.h>

#define SOCKS5_MSG_MAX 520 /* the largest message either side sends here */

/* The greeting: one method, username/password when auth, else none (never
 * both: a server that would take no credentials is not the one configured). */
size_t socks5_greeting(unsigned char *out, bool auth);
/* The server's method choice; NULL when it is the one offered, else why. */
const char *socks5_method_check(const unsigned char in[2], bool auth);

/* RFC 1929's request; user and pass are 1-255 bytes. */
size_t socks5_auth(unsigned char *out, const char *user, const char *pass);
/* NULL when the server accepted the credentials, else why. */
const char *socks5_auth_check(const unsigned char in[2]);

/* CONNECT to a name (ATYP domain) or, with literal, to an address (ATYP
 * IPv4 or IPv6). */
size_t socks5_connect(unsigned char *out, const char *name, const struct ipaddr *literal,
                      unsigned port);
/* The reply's first five bytes: NULL when it succeeded, with *rest the
 * bytes of the bound address still to read; else why. */
const char *socks5_reply_check(const unsigned char in[5], size_t *rest);

#endif
