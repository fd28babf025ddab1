#include "tunnel.h"

#include "clock.h"
#include "h2bridge.h"
#include "holders.h"
#include "log.h"
#include "upgrade.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HEAD_TIMEOUT_MS 5000

/* The request head, a byte at a time so that nothing past it is taken from
 * the connection (the bridge reads the rest). Its length, or -1. */
static ssize_t read_head(int fd, char *buf, size_t cap)
{
    int64_t until = clock_now_ms() + HEAD_TIMEOUT_MS;
    size_t n = 0;

    while (n < cap && !upgrade_head_done(buf, n)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int64_t left = until - clock_now_ms();
        ssize_t r;

        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return -1;
        r = recv(fd, buf + n, 1, 0);
        if (r <= 0 && !(r < 0 && (errno == EAGAIN || errno == EINTR)))
            return -1;
        n += r > 0 ? (size_t)r : 0;
    }
    return upgrade_head_done(buf, n) ? (ssize_t)n : -1;
}

static void answer(int fd, const char *status, const char *msg)
{
    char buf[512];
    int n = snprintf(buf, sizeof(buf),
                     "HTTP/1.1 %s\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     "Content-Length: %zu\r\n\r\n{\"code\":%.3s,\"message\":\"%s\"}",
                     status, strlen(msg) + 25, status, msg);

    if (n > 0 &&
        send(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, MSG_NOSIGNAL) < 0)
        log_warn("tunnel: answer not sent: %s", strerror(errno));
}

/* The worker's own port, on the address of tunnel_ports. */
static int listen_port(const char *addr)
{
    char host[48], *colon;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST}, *ai;
    int fd, one = 1;

    snprintf(host, sizeof(host), "%s", addr[0] == '[' ? addr + 1 : addr);
    colon = strrchr(host, ':');
    if (!colon)
        return -1;
    *colon = '\0';
    if (colon > host && colon[-1] == ']')
        colon[-1] = '\0';
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
        return -1;
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
                    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0)) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

static ssize_t plain_recv(void *ctx, void *buf, size_t n)
{
    return recv(*(int *)ctx, buf, n, MSG_DONTWAIT);
}

static ssize_t plain_send(void *ctx, const void *buf, size_t n)
{
    return send(*(int *)ctx, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* The bridge, this end opening a stream for each connection on the port. */
static void bridge(int fd, int lfd, const struct holder *h)
{
    struct h2b_io io = {.ctx = &fd, .recv = plain_recv, .send = plain_send, .fd = fd};
    struct h2b *b = h2b_new(H2B_OPENER, &io, NULL, NULL);
    struct h2b_stats st;
    int64_t t0 = clock_now_ms();
    int rc;

    if (!b) {
        log_err("tunnel of worker %s: out of memory", h->worker);
        return;
    }
    rc = h2b_run(b, lfd, "dataport", h->stop_fd, H2B_TUNNEL_PING_MS, H2B_TUNNEL_DEAD_MS);
    h2b_stats(b, &st);
    log_info("tunnel of worker %s at %s ended (%s) after %lld s: %lld streams, %lld bytes in, "
             "%lld out",
             h->worker, h->addr, rc == 0 ? "closed" : "broken",
             (long long)((clock_now_ms() - t0) / 1000), st.streams_opened, st.bytes_in,
             st.bytes_out);
    h2b_free(b);
}

/* A free slot whose port this process can listen on: a port another
 * process holds (anything may bind in the range) is skipped, not retried
 * at every reconnection of the worker. Its index with *lfd, or -1. */
static int take_port(const struct upgrade_req *req, int *lfd)
{
    unsigned char *tried = calloc(holders_count(), 1);
    struct holder h;
    int i = -1;

    while (tried && (i = holders_take(req->worker, req->pool, tried)) >= 0) {
        holders_get(i, &h);
        *lfd = listen_port(h.addr);
        if (*lfd >= 0)
            break;
        log_warn("tunnel of worker %s: cannot listen on %s (%s); another port is tried",
                 req->worker, h.addr, strerror(errno));
        tried[i] = 1;
        holders_put(i);
    }
    free(tried);
    return i;
}

static void hold(int fd, const struct upgrade_req *req)
{
    static const char ok[] = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: " UPGRADE_PROTOCOL
                             "\r\nConnection: Upgrade\r\n\r\n";
    int lfd = -1, i = take_port(req, &lfd);
    struct holder h;

    if (i < 0) {
        log_warn("tunnel of worker %s refused: no free tunnel port", req->worker);
        answer(fd, "503 Service Unavailable", "no free tunnel port on this gateway host");
        return;
    }
    holders_get(i, &h);
    if (send(fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof(ok) - 1)) {
        holders_record(i);
        log_info("tunnel of worker %s (pool %s) held at %s", req->worker,
                 req->pool[0] ? req->pool : "fleet", h.addr);
        bridge(fd, lfd, &h);
    }
    close(lfd); /* its connections end with their streams (h2b_run) */
    holders_put(i);
}

void tunnel_serve(int fd)
{
    char head[UPGRADE_HEAD_MAX], why[160];
    struct upgrade_req req;
    ssize_t n = read_head(fd, head, sizeof(head));

    if (n < 0)
        answer(fd, "400 Bad Request", "no whole request head within 5 s");
    else if (upgrade_parse(head, (size_t)n, &req, why, sizeof(why)) != 0) {
        log_warn("tunnel refused: %s", why);
        answer(fd, "400 Bad Request", why);
    } else
        hold(fd, &req);
    close(fd);
}
