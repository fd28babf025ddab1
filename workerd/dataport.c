/*
 * dataport.c: the worker's data port (see dataport.h and docs/data-plane.md).
 * The sockets and threads are here; parsing the head, checking its signature,
 * rewriting it and the JSON of a refusal are pure, in dataport_head.c.
 *
 * Threads: one accepts, and each connection gets a thread of its own that
 * blocks on it. A worker hosts tens of sandboxes, so hundreds of connections
 * at most; a thread each keeps the relay a plain loop, and a cap
 * (DATAPORT_MAX_CONNS) turns overload into a 503 rather than a crash.
 *
 * Why one request per connection: after the head, bytes are copied without
 * being parsed, so the data port cannot see where a second request on the
 * same connection would begin. A second request could name another sandbox
 * (nginx pools connections per data port, not per sandbox), and would reach
 * the first one's container unchecked. So the forwarded head says
 * "Connection: close" (an Upgrade keeps its own Connection header: after
 * 101 the connection belongs to that one sandbox port anyway), and the
 * connection ends with the response.
 *
 * Rejected: splice(2) through a pipe per direction. It saves a copy, but the
 * plain copy already moves well over a gigabyte a second on loopback, far
 * more than nginx's TLS in front of it, and it keeps the partial-write and
 * back-pressure handling obvious.
 */
#include "dataport.h"

#include "clock.h"
#include "dataport_head.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define DATAPORT_HEAD_MAX ((size_t)64 * 1024) /* request line and headers */
#define DATAPORT_BUF ((size_t)64 * 1024)      /* per direction, while relaying */
#define DATAPORT_HEAD_TIMEOUT_MS 30000        /* to send a complete head */
#define DATAPORT_CONNECT_TIMEOUT_MS 5000
#define DATAPORT_IDLE_TIMEOUT_MS (60 * 60 * 1000) /* no byte either way */
#define DATAPORT_LINGER_MS 2000                   /* draining a refused request's body */
#define DATAPORT_MAX_CONNS 4096
#define DATAPORT_KEY_MAX 512
#define DATAPORT_IP_MAX 64

struct dataport {
    int fd;
    struct dataport_hooks hooks;
    atomic_int conns;
};

/* The last accept failure, for the worker's health (health.c). */
static struct {
    pthread_mutex_t mu;
    int64_t when;
    char why[128];
} trouble = {.mu = PTHREAD_MUTEX_INITIALIZER};

int64_t dataport_accept_trouble(char *why, size_t len)
{
    int64_t when;

    pthread_mutex_lock(&trouble.mu);
    when = trouble.when;
    snprintf(why, len, "%s", trouble.why);
    pthread_mutex_unlock(&trouble.mu);
    return when;
}

static void note_trouble(int err)
{
    pthread_mutex_lock(&trouble.mu);
    trouble.when = clock_now_ms();
    snprintf(trouble.why, sizeof(trouble.why), "%s", strerror(err));
    pthread_mutex_unlock(&trouble.mu);
}

struct conn {
    struct dataport *dp;
    int fd;
};

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads and discards what the client still sends, for a little while, so
 * that closing with unread data does not reset the connection before the
 * gateway has read the answer. */
static void linger_drain(int fd)
{
    char sink[16384];
    long long deadline = now_ms() + DATAPORT_LINGER_MS;
    struct pollfd p = {.fd = fd, .events = POLLIN};

    shutdown(fd, SHUT_WR);
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return;
        if (recv(fd, sink, sizeof(sink), 0) <= 0)
            return;
    }
}

static void reply_error(int fd, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sends {"code":code,"message":...} and, unless it is the accept thread
 * (code 503: it must not wait), drains what the client still sends. */
static void reply_error(int fd, int code, const char *fmt, ...)
{
    char msg[256], *out;
    size_t n = 0;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    out = dataport_error_response(code, msg, &n);
    if (out && send_all(fd, out, n) == 0 && code != 503)
        linger_drain(fd);
    free(out);
}

/* Not here, or paused: the same answer as the gateway's own (decision 0033). */
static void reply_not_found(int fd, const char *sbid)
{
    size_t n = 0;
    char *out = dataport_not_found_response(sbid, &n);

    if (out && send_all(fd, out, n) == 0)
        linger_drain(fd);
    free(out);
}

/* Reads until the blank line that ends the head. The head's length, or 0 on
 * EOF/timeout/error (nothing to answer), or -1 when it is too large. */
static ssize_t read_head(int fd, char *buf, size_t cap, size_t *got)
{
    long long deadline = now_ms() + DATAPORT_HEAD_TIMEOUT_MS;
    struct pollfd p = {.fd = fd, .events = POLLIN};

    *got = 0;
    for (;;) {
        char *end;
        long long left;
        ssize_t r;

        end = *got >= 4 ? memmem(buf, *got, "\r\n\r\n", 4) : NULL;
        if (end)
            return end + 4 - buf;
        if (*got == cap)
            return -1;
        left = deadline - now_ms();
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return 0;
        r = recv(fd, buf + *got, cap - *got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        *got += (size_t)r;
    }
}

/* dataport_signature_check under this worker's current and previous keys. */
static int check_signature(struct dataport *dp, const struct dataport_head *h, const char **why)
{
    char key[DATAPORT_KEY_MAX], previous[DATAPORT_KEY_MAX];
    int rc;

    if (dp->hooks.worker_key(dp->hooks.ud, key, sizeof(key)) != 0)
        key[0] = '\0';
    if (!dp->hooks.previous_key ||
        dp->hooks.previous_key(dp->hooks.ud, previous, sizeof(previous)) != 0)
        previous[0] = '\0';
    rc = dataport_signature_check(h, key, previous, (long long)time(NULL), why);
    explicit_bzero(key, sizeof(key));
    explicit_bzero(previous, sizeof(previous));
    return rc;
}

/* A connected socket to ip:port, or -1 (errno set) within the timeout. */
static int connect_upstream(const char *ip, const char *port)
{
    struct addrinfo hints = {0}, *ai = NULL;
    struct pollfd p;
    int fd, err = 0, flags;
    socklen_t elen = sizeof(err);

    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    if (getaddrinfo(ip, port, &hints, &ai) != 0 || !ai) {
        errno = EINVAL;
        return -1;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        freeaddrinfo(ai);
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
        err = errno;
        goto fail;
    }
    p.fd = fd;
    p.events = POLLOUT;
    if (poll(&p, 1, DATAPORT_CONNECT_TIMEOUT_MS) != 1) {
        err = ETIMEDOUT;
        goto fail;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
        if (err == 0)
            err = errno;
        goto fail;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        err = errno;
        goto fail;
    }
    freeaddrinfo(ai);
    return fd;
fail:
    freeaddrinfo(ai);
    close(fd);
    errno = err;
    return -1;
}

/* Sends the head without X-Corral-* headers, and with "Connection: close"
 * unless it is an upgrade. 0, or -1 on a write error. */
static int forward_head(int up, const struct dataport_head *h)
{
    char *out = malloc(h->len + DATAPORT_FORWARD_EXTRA);
    int rc;

    if (!out)
        return -1;
    rc = send_all(up, out, dataport_head_forward(h, out));
    free(out);
    return rc;
}

/* One direction of the relay: bytes read from `from`, waiting to be written
 * to `to`. */
struct pipe_dir {
    int from, to;
    char *buf;
    size_t off, len;
    int eof;  /* `from` said EOF */
    int done; /* EOF and everything written; `to` shut for writing */
};

/* Moves what it can without blocking; -1 on an error of either socket. */
static int pump(struct pipe_dir *d, short revents_from, short revents_to)
{
    if (d->len == 0 && !d->eof && (revents_from & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t r = recv(d->from, d->buf, DATAPORT_BUF, MSG_DONTWAIT);
        if (r > 0) {
            d->off = 0;
            d->len = (size_t)r;
        } else if (r == 0) {
            d->eof = 1;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return -1;
        }
    }
    if (d->len > 0 && (revents_to & (POLLOUT | POLLERR | POLLHUP))) {
        ssize_t w = send(d->to, d->buf + d->off, d->len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) {
            d->off += (size_t)w;
            d->len -= (size_t)w;
        } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return -1;
        }
    }
    if (d->eof && d->len == 0 && !d->done) {
        shutdown(d->to, SHUT_WR);
        d->done = 1;
    }
    return 0;
}

/* Copies both ways until the response is complete (upstream EOF), or, for
 * an upgraded connection, until both directions are done. */
static void relay(int client, int up, const char *rest, size_t restlen, int upgrade)
{
    char *bufs = malloc(2 * DATAPORT_BUF);
    struct pipe_dir c2u = {.from = client, .to = up}, u2c = {.from = up, .to = client};

    if (!bufs)
        return;
    c2u.buf = bufs;
    u2c.buf = bufs + DATAPORT_BUF;
    /* body bytes that arrived with the head go first */
    if (restlen > 0 && send_all(up, rest, restlen) != 0)
        goto out;
    while (!(u2c.done && (c2u.done || !upgrade))) {
        struct pollfd p[2] = {{.fd = client}, {.fd = up}};
        int n;

        /* read when the buffer is empty (back-pressure), write when it is not */
        if (c2u.len == 0 && !c2u.eof)
            p[0].events |= POLLIN;
        if (u2c.len > 0)
            p[0].events |= POLLOUT;
        if (u2c.len == 0 && !u2c.eof)
            p[1].events |= POLLIN;
        if (c2u.len > 0)
            p[1].events |= POLLOUT;
        n = poll(p, 2, DATAPORT_IDLE_TIMEOUT_MS);
        if (n == 0)
            break; /* idle for an hour */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pump(&c2u, p[0].revents, p[1].revents) < 0 ||
            pump(&u2c, p[1].revents, p[0].revents) < 0)
            break;
        if ((p[0].revents | p[1].revents) & (POLLERR | POLLNVAL))
            break; /* a reset on either side ends the exchange */
    }
out:
    free(bufs);
}

static void serve(struct dataport *dp, int fd)
{
    char *buf = malloc(DATAPORT_HEAD_MAX);
    char ip[DATAPORT_IP_MAX];
    struct dataport_head h;
    const char *why = NULL;
    size_t got = 0;
    ssize_t hl;
    int up, rc, one = 1;

    if (!buf)
        return;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    hl = read_head(fd, buf, DATAPORT_HEAD_MAX, &got);
    if (hl == 0)
        goto out;
    if (hl < 0) {
        reply_error(fd, 431, "request head over %zu bytes", DATAPORT_HEAD_MAX);
        goto out;
    }
    memset(&h, 0, sizeof(h));
    h.buf = buf;
    h.len = (size_t)hl;
    if (dataport_head_parse(&h) != 0) {
        reply_error(fd, 400, "malformed request head");
        goto out;
    }
    if ((rc = check_signature(dp, &h, &why)) != 0) {
        log_sandbox("warn", dataport_valid_id(h.sandbox) ? h.sandbox : NULL, NULL,
                    "dataport: refused a request: %s", why);
        reply_error(fd, rc == -2 ? 503 : 403, "%s", why);
        goto out;
    }
    if (dp->hooks.resolve(dp->hooks.ud, h.sandbox, ip, sizeof(ip)) != 0) {
        reply_not_found(fd, h.sandbox);
        goto out;
    }
    up = connect_upstream(ip, h.port);
    if (up < 0) {
        reply_error(fd, 502, "sandbox port %s is not reachable (%s)", h.port, strerror(errno));
        goto out;
    }
    setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (forward_head(up, &h) == 0)
        relay(fd, up, buf + hl, got - (size_t)hl, h.upgrade);
    close(up);
out:
    free(buf);
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;

    serve(c->dp, c->fd);
    close(c->fd);
    atomic_fetch_sub(&c->dp->conns, 1);
    free(c);
    return NULL;
}

static void *accept_main(void *arg)
{
    struct dataport *dp = arg;
    pthread_attr_t attr;

    if (pthread_attr_init(&attr) != 0 ||
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) != 0 ||
        pthread_attr_setstacksize(&attr, (size_t)256 * 1024) != 0) {
        log_err("dataport: cannot set up thread attributes");
        return NULL;
    }
    for (;;) {
        int fd = accept4(dp->fd, NULL, NULL, SOCK_CLOEXEC);
        struct conn *c;
        pthread_t t;

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            log_err("dataport: accept: %s", strerror(errno));
            note_trouble(errno);
            /* EMFILE and friends: back off rather than spin */
            usleep(100000);
            continue;
        }
        if (atomic_fetch_add(&dp->conns, 1) >= DATAPORT_MAX_CONNS) {
            atomic_fetch_sub(&dp->conns, 1);
            reply_error(fd, 503, "worker data port busy; retry shortly");
            close(fd);
            continue;
        }
        c = malloc(sizeof(*c));
        if (c) {
            c->dp = dp;
            c->fd = fd;
        }
        if (!c || pthread_create(&t, &attr, conn_main, c) != 0) {
            log_err("dataport: cannot start a connection thread");
            free(c);
            atomic_fetch_sub(&dp->conns, 1);
            close(fd);
        }
    }
    return NULL;
}

/* Splits "host:port", "[v6]:port" or ":port". 0, or -1. */
static int split_addr(const char *addr, char *host, size_t hcap, const char **port)
{
    const char *colon;
    size_t n;

    if (addr[0] == '[') {
        const char *close_b = strchr(addr, ']');
        if (!close_b || close_b[1] != ':')
            return -1;
        n = (size_t)(close_b - addr - 1);
        if (n >= hcap)
            return -1;
        memcpy(host, addr + 1, n);
        host[n] = '\0';
        *port = close_b + 2;
        return 0;
    }
    colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= hcap)
        return -1;
    n = (size_t)(colon - addr);
    memcpy(host, addr, n);
    host[n] = '\0';
    *port = colon + 1;
    return 0;
}

int dataport_start(const char *listen_addr, const struct dataport_hooks *hooks)
{
    struct addrinfo hints = {0}, *ai = NULL;
    struct dataport *dp;
    char host[128];
    const char *port;
    pthread_t t;
    int fd, one = 1, rc;

    if (!hooks || !hooks->worker_key || !hooks->resolve) {
        log_err("dataport: worker_key and resolve hooks are required");
        return -1;
    }
    if (split_addr(listen_addr, host, sizeof(host), &port) != 0 ||
        !dataport_all_digits(port, 1, 5)) {
        log_err("dataport: listen address \"%s\" is not host:port", listen_addr);
        return -1;
    }
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (rc != 0 || !ai) {
        log_err("dataport: %s: %s", listen_addr, gai_strerror(rc));
        return -1;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 512) != 0) {
        log_err("dataport: cannot listen on %s: %s", listen_addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    dp = calloc(1, sizeof(*dp));
    if (!dp) {
        close(fd);
        return -1;
    }
    dp->fd = fd;
    dp->hooks = *hooks;
    atomic_init(&dp->conns, 0);
    if (pthread_create(&t, NULL, accept_main, dp) != 0) {
        log_err("dataport: cannot start the accept thread");
        close(fd);
        free(dp);
        return -1;
    }
    pthread_detach(t);
    log_info("dataport: listening on %s", listen_addr);
    return 0;
}
