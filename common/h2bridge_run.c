/* h2bridge_run.c: a tunnel's loop (h2bridge.h): the tunnel connection, the
 * listening socket and every stream's socket in one poll. */
#include "h2bridge_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RECV_CHUNK 65536

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* nghttp2's bytes onto the tunnel until it has none or the tunnel is full.
 * -1: the tunnel broke. */
static int send_out(struct h2b *b)
{
    for (;;) {
        if (b->pend_len == 0) {
            ssize_t n = nghttp2_session_mem_send(b->s, &b->pend);
            if (n < 0)
                return -1;
            if (n == 0)
                return 0;
            b->pend_len = (size_t)n;
        }
        ssize_t w = b->io.send(b->io.ctx, b->pend, b->pend_len);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return 0;
        if (w <= 0)
            return -1;
        b->pend += w;
        b->pend_len -= (size_t)w;
    }
}

/* Everything the tunnel has now (a TLS library may hold more than the socket
 * shows). 1 more to come, 0 the peer closed, -1 an error. */
static int recv_in(struct h2b *b)
{
    static __thread uint8_t buf[RECV_CHUNK];

    for (;;) {
        ssize_t n = b->io.recv(b->io.ctx, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return 1;
        if (n <= 0)
            return n == 0 ? 0 : -1;
        b->last_rx = now_ms();
        if (nghttp2_session_mem_recv(b->s, buf, (size_t)n) != n)
            return -1;
    }
}

static void accept_all(struct h2b *b, int lfd, const char *authority)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), one = 1;
        if (fd < 0)
            return;
        /* an answer's last small write must not wait for the peer's ACK */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        h2b_open(b, fd, authority);
    }
}

struct pollset {
    struct pollfd *p;
    int32_t *id; /* the stream of p[i], or 0 */
    size_t n, cap;
};

static int add(struct pollset *ps, int fd, short ev, int32_t id)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        struct pollfd *p = realloc(ps->p, cap * sizeof(*p));
        int32_t *ids = p ? realloc(ps->id, cap * sizeof(*ids)) : NULL;
        if (p)
            ps->p = p;
        if (!ids)
            return -1;
        ps->id = ids;
        ps->cap = cap;
    }
    ps->p[ps->n] = (struct pollfd){.fd = fd, .events = ev};
    ps->id[ps->n++] = id;
    return 0;
}

/* p[0] the tunnel, p[1] the stop fd, p[2] the listening socket (each -1
 * when absent: poll skips it), then the streams that wait on their socket. */
static int build(struct h2b *b, struct pollset *ps, int lfd, int stop_fd)
{
    ps->n = 0;
    if (add(ps, b->io.fd, (short)(POLLIN | (b->pend_len ? POLLOUT : 0)), 0) ||
        add(ps, stop_fd, POLLIN, 0) || add(ps, lfd, POLLIN, 0))
        return -1;
    for (struct h2b_stream *st = b->streams; st; st = st->next) {
        short ev = (short)((st->deferred ? POLLIN : 0) | (st->in_len ? POLLOUT : 0));
        if (ev && st->fd >= 0 && add(ps, st->fd, ev, st->id))
            return -1;
    }
    return 0;
}

static void stream_ready(struct h2b *b, int32_t id, short rev)
{
    struct h2b_stream *st = h2b_stream_find(b, id);

    if (!st)
        return;
    if ((rev & (POLLOUT | POLLERR | POLLHUP)) && st->in_len)
        h2b_stream_flush(b, st);
    if (st->closed && st->in_len == 0) {
        h2b_stream_drop(b, st);
        return;
    }
    if ((rev & (POLLIN | POLLERR | POLLHUP)) && st->deferred && !st->closed) {
        st->deferred = 0;
        nghttp2_session_resume_data(b->s, id);
    }
}

/* One turn: 1 go on, 0 a clean end, -1 an error. */
static int turn(struct h2b *b, struct pollset *ps, int lfd, const char *auth, int stop_fd,
                int ping_ms, int dead_ms)
{
    int64_t now = now_ms();
    int rc;

    if (now - b->last_rx > dead_ms)
        return -1;
    if (now - b->last_ping >= ping_ms) {
        nghttp2_submit_ping(b->s, NGHTTP2_FLAG_NONE, NULL);
        b->last_ping = now;
    }
    if (send_out(b) != 0)
        return -1;
    if (!nghttp2_session_want_read(b->s) && !nghttp2_session_want_write(b->s) && !b->pend_len)
        return b->broken ? -1 : 0;
    if (build(b, ps, lfd, stop_fd) != 0)
        return -1;
    rc = poll(ps->p, ps->n, 1000);
    if (rc < 0)
        return errno == EINTR ? 1 : -1;
    if (ps->p[1].revents)
        return 0;
    if (ps->p[0].revents & (POLLIN | POLLERR | POLLHUP)) {
        rc = recv_in(b);
        if (rc <= 0)
            return rc;
    }
    if (ps->p[2].revents & POLLIN)
        accept_all(b, lfd, auth);
    for (size_t i = 3; i < ps->n; i++)
        if (ps->p[i].revents)
            stream_ready(b, ps->id[i], ps->p[i].revents);
    return 1;
}

int h2b_run(struct h2b *b, int listen_fd, const char *listen_authority, int stop_fd,
            int ping_every_ms, int dead_after_ms)
{
    struct pollset ps = {0};
    int rc;

    if (b->role != H2B_OPENER)
        listen_fd = -1;
    b->last_rx = b->last_ping = now_ms();
    /* what came with the upgrade's answer may already wait in a TLS buffer */
    rc = recv_in(b);
    while (rc > 0)
        rc = turn(b, &ps, listen_fd, listen_authority ? listen_authority : "", stop_fd,
                  ping_every_ms, dead_after_ms);
    /* tell the peer why, as far as the tunnel still takes it */
    nghttp2_session_terminate_session(b->s, rc == 0 ? NGHTTP2_NO_ERROR : NGHTTP2_PROTOCOL_ERROR);
    send_out(b);
    while (b->streams)
        h2b_stream_drop(b, b->streams);
    free(ps.p);
    free(ps.id);
    return rc;
}
