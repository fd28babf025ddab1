/* h2bridge.h: byte streams over one HTTP/2 connection (libnghttp2): the worker
 * tunnel's framing (decision 0087).
 *
 * Each stream is an HTTP/2 CONNECT stream (RFC 9113 8.5) joined to a local
 * socket. The opener (HTTP/2 client: corral-tunneld) turns each connection it
 * accepts into a stream; the accepter (HTTP/2 server: workerd) answers each
 * stream by connecting somewhere local. Only the opener opens streams: the
 * accepter cannot (there is no server-initiated stream but a push, and the
 * opener turns push off), so a compromised worker has no way to open a
 * connection on the gateway host. Flow control is HTTP/2's, per stream and
 * per connection: bytes are acknowledged only once written to their local
 * socket, so a stalled reader holds back its own stream alone. */
#ifndef CORRAL_H2BRIDGE_H
#define CORRAL_H2BRIDGE_H

#include <stddef.h>
#include <sys/types.h>

enum h2b_role { H2B_OPENER, H2B_ACCEPTER };

/* The tunnel connection itself (plain TCP, or TLS through a library). */
struct h2b_io {
    void *ctx;
    /* > 0 bytes, 0 end of stream, -1 with errno EAGAIN for "nothing now",
     * -1 otherwise an error */
    ssize_t (*recv)(void *ctx, void *buf, size_t n);
    ssize_t (*send)(void *ctx, const void *buf, size_t n);
    int fd; /* polled for readiness; nonblocking */
};

/* Accepter: a stream arrived for authority; a connected fd, or -1 to refuse
 * it (the stream is reset with REFUSED_STREAM). The bridge owns the fd. */
typedef int (*h2b_accept_fn)(void *ctx, const char *authority);

/* Both ends of a worker tunnel PING this often and call a tunnel silent this
 * long dead (decision 0087): one pair, so the two ends never disagree. */
#define H2B_TUNNEL_PING_MS 10000
#define H2B_TUNNEL_DEAD_MS 30000

struct h2b_stats {
    long long streams_opened, streams_open, bytes_in, bytes_out;
};

struct h2b *h2b_new(enum h2b_role role, const struct h2b_io *io, h2b_accept_fn accept,
                    void *accept_ctx);
/* Closes every stream's fd, not io->fd (the caller's). */
void h2b_free(struct h2b *b);
/* Opener: fd's bytes as a new stream to authority; the bridge owns fd. 0, or
 * -1 (fd closed). */
int h2b_open(struct h2b *b, int fd, const char *authority);
/* The loop, on the calling thread, until the tunnel ends (peer EOF, GOAWAY
 * with no stream left, a protocol error, no frame for dead_after_ms while a
 * PING goes every ping_every_ms) or stop_fd (>= 0) is readable. listen_fd >=
 * 0 (opener): each connection accepted on it becomes a stream to
 * listen_authority. Every stream's fd is closed on return. 0 a clean end,
 * -1 an error. */
int h2b_run(struct h2b *b, int listen_fd, const char *listen_authority, int stop_fd,
            int ping_every_ms, int dead_after_ms);
void h2b_stats(const struct h2b *b, struct h2b_stats *out);

#endif
