/* tls_io.h: blocking-style TLS steps on non-blocking sockets, each bounded
 * by a deadline. */
#ifndef CORRAL_EGRESS_TLS_IO_H
#define CORRAL_EGRESS_TLS_IO_H

#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>

/* 0, or -1 (the peer failed it, or the deadline passed). */
int tls_handshake(SSL *s, int fd, int64_t deadline);
int tls_write_all(SSL *s, int fd, const void *buf, size_t n, int64_t deadline);
/* A text/plain error answer with Connection: close, then close_notify. */
void tls_reply_error(SSL *s, int fd, int status, const char *body, int64_t deadline);

#endif
