/* dataport_io.c: the data port's non-blocking reads, writes and connects,
 * and its pending-write buffers (see dataport_loop.h). */
#include "dataport_loop.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int64_t io_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ssize_t io_recv(struct dp_ep *e, char *p, size_t n)
{
    for (;;) {
        ssize_t r = recv(e->fd, p, n, 0);
        /* A short read took all there was; bytes that come later raise an
         * event of their own (edge-triggered), so no recv is spent to hear
         * EAGAIN: two system calls less per request. */
        if (r > 0 && (size_t)r < n)
            e->can_read = 0;
        if (r >= 0)
            return r;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            e->can_read = 0;
            return -1;
        }
        return -2;
    }
}

ssize_t io_send(struct dp_ep *e, const char *p, size_t n)
{
    for (;;) {
        ssize_t w = send(e->fd, p, n, MSG_NOSIGNAL);
        if (w >= 0) {
            if ((size_t)w < n)
                e->can_write = 0; /* the socket's buffer is full: wait for EPOLLOUT */
            return w;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            e->can_write = 0;
            return -1;
        }
        return -2;
    }
}

void buf_free(struct dp_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

int buf_append(struct dp_buf *b, const char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (b->off > 0 && b->off + b->len + n > b->cap) {
        memmove(b->p, b->p + b->off, b->len);
        b->off = 0;
    }
    if (b->off + b->len + n > b->cap) {
        size_t cap = b->len + n;
        char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->off + b->len, p, n);
    b->len += n;
    return 0;
}

int buf_flush(struct dp_buf *b, struct dp_ep *e)
{
    while (b->len > 0 && e->can_write) {
        ssize_t w = io_send(e, b->p + b->off, b->len);
        if (w == -2)
            return -1;
        if (w < 0)
            break;
        b->off += (size_t)w;
        b->len -= (size_t)w;
    }
    if (b->len == 0) {
        buf_free(b);
        return 0;
    }
    return 1;
}

int send_or_keep(struct dp_buf *b, struct dp_ep *e, const char *p, size_t n)
{
    if (b->len == 0 && e->can_write) {
        ssize_t w = io_send(e, p, n);
        if (w == -2)
            return -1;
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        }
    }
    return buf_append(b, p, n);
}

/* Binds fd to ai's address, any port: the connection then comes from the
 * address it goes to. The port is chosen at connect (IP_BIND_ADDRESS_NO_PORT),
 * so connections to different ports share the ephemeral range. 0, or -1
 * with errno. */
static int bind_to_own(int fd, const struct addrinfo *ai)
{
    struct sockaddr_storage a;
    int one = 1;

    if (ai->ai_addrlen > sizeof(a)) {
        errno = EINVAL;
        return -1;
    }
    memcpy(&a, ai->ai_addr, ai->ai_addrlen);
    if (a.ss_family == AF_INET)
        ((struct sockaddr_in *)&a)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&a)->sin6_port = 0;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
    return bind(fd, (struct sockaddr *)&a, ai->ai_addrlen);
}

int io_connect(const char *ip, const char *port, int from_ip)
{
    struct addrinfo hints = {0}, *ai = NULL;
    int fd, one = 1, err;

    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    if (getaddrinfo(ip, port, &hints, &ai) != 0 || !ai) {
        errno = EINVAL;
        return -1;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if ((from_ip && bind_to_own(fd, ai) != 0) ||
            (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS)) {
            err = errno;
            close(fd);
            fd = -1;
            errno = err;
        }
    }
    freeaddrinfo(ai);
    return fd;
}
