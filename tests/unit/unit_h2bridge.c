/* Unit test of common/h2bridge.c: the worker tunnel's framing (decision 0087)
 * over a real socket pair, an opener and an accepter each on a thread of its
 * own, real local sockets on both sides. Standalone (build/bin/unit-h2bridge):
 * prints a line per check, exits 1 on any failure. Every wait is bounded. */
#include "h2bridge.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int failed;
#define CHECK(c, what)                                                                             \
    do {                                                                                           \
        printf("%s: %s\n", (c) ? "ok" : "FAIL", what);                                             \
        failed |= !(c);                                                                            \
    } while (0)

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The far ends the accepter made, in order, for the test to use. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int far[256], nfar, refuse;

static int accept_cb(void *ctx, const char *authority)
{
    int sv[2];

    (void)ctx;
    if (refuse || strcmp(authority, "dataport") != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    pthread_mutex_lock(&mu);
    far[nfar++] = sv[1];
    pthread_mutex_unlock(&mu);
    return sv[0];
}

static int far_end(int i)
{
    for (int64_t until = now_ms() + 5000; now_ms() < until;) {
        pthread_mutex_lock(&mu);
        int fd = i < nfar ? far[i] : -1;
        pthread_mutex_unlock(&mu);
        if (fd >= 0)
            return fd;
        poll(NULL, 0, 5);
    }
    return -1;
}

static void *echo_main(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[65536];
    ssize_t n;

    while ((n = read(fd, buf, sizeof(buf))) > 0)
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w <= 0)
                goto out;
            off += w;
        }
out:
    shutdown(fd, SHUT_WR);
    close(fd);
    return NULL;
}

static void echo(int fd)
{
    pthread_t t;

    pthread_create(&t, NULL, echo_main, (void *)(intptr_t)fd);
    pthread_detach(t);
}

struct end {
    struct h2b *b;
    int fd, lfd, stop;
    int rc;
};

static ssize_t s_recv(void *ctx, void *buf, size_t n)
{
    return recv(*(int *)ctx, buf, n, MSG_DONTWAIT);
}

static ssize_t s_send(void *ctx, const void *buf, size_t n)
{
    return send(*(int *)ctx, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void *run_main(void *arg)
{
    struct end *e = arg;

    e->rc = h2b_run(e->b, e->lfd, "dataport", e->stop, 500, 5000);
    return NULL;
}

static int listen_any(int *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64) ||
        getsockname(fd, (struct sockaddr *)&a, &len))
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

static int dial(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    return connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ? fd : -1;
}

/* Writes n bytes and reads them back, interleaved (the far end echoes), with
 * a half-close after the last byte; 0 when the echo is exact and ends. */
static int roundtrip(int fd, const unsigned char *data, size_t n, int timeout_ms)
{
    unsigned char *got = malloc(n + 1);
    size_t out = 0, in = 0;
    int64_t until = now_ms() + timeout_ms;
    int ok = 0;

    fcntl(fd, F_SETFL, O_NONBLOCK);
    while (now_ms() < until) {
        struct pollfd p = {.fd = fd, .events = (short)(POLLIN | (out < n ? POLLOUT : 0))};
        poll(&p, 1, 100);
        if (out < n && (p.revents & POLLOUT)) {
            ssize_t w = write(fd, data + out, n - out);
            out += w > 0 ? (size_t)w : 0;
            if (out == n)
                shutdown(fd, SHUT_WR);
        }
        if (p.revents & (POLLIN | POLLHUP)) {
            ssize_t r = read(fd, got + in, n + 1 - in);
            if (r == 0) {
                ok = in == n && memcmp(got, data, n) == 0;
                break;
            }
            in += r > 0 ? (size_t)r : 0;
        }
    }
    free(got);
    close(fd);
    return ok ? 0 : -1;
}

struct rt {
    size_t n;
    int fd;
    int rc;
};

static void *rt_main(void *arg)
{
    struct rt *r = arg;
    unsigned char *d = malloc(r->n);

    for (size_t i = 0; i < r->n; i++)
        d[i] = (unsigned char)rand();
    r->rc = roundtrip(r->fd, d, r->n, 15000);
    free(d);
    return NULL;
}

static struct end opener, accepter;
static pthread_t topen, taccept;
static int port;

static void start_pair(void)
{
    int sv[2];
    struct h2b_io io;

    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
    opener = (struct end){.fd = sv[0], .lfd = listen_any(&port), .stop = eventfd(0, 0)};
    accepter = (struct end){.fd = sv[1], .lfd = -1, .stop = eventfd(0, 0)};
    io = (struct h2b_io){.ctx = &opener.fd, .recv = s_recv, .send = s_send, .fd = sv[0]};
    opener.b = h2b_new(H2B_OPENER, &io, NULL, NULL);
    io = (struct h2b_io){.ctx = &accepter.fd, .recv = s_recv, .send = s_send, .fd = sv[1]};
    accepter.b = h2b_new(H2B_ACCEPTER, &io, accept_cb, NULL);
    nfar = 0;
    pthread_create(&topen, NULL, run_main, &opener);
    pthread_create(&taccept, NULL, run_main, &accepter);
}

static void stop(struct end *e)
{
    uint64_t one = 1;

    if (write(e->stop, &one, sizeof(one)) != sizeof(one))
        perror("eventfd");
}

static void end_pair(void)
{
    stop(&opener);
    stop(&accepter);
    pthread_join(topen, NULL);
    pthread_join(taccept, NULL);
    h2b_free(opener.b);
    h2b_free(accepter.b);
    close(opener.fd), close(accepter.fd), close(opener.lfd), close(opener.stop),
        close(accepter.stop);
}

static void test_concurrent(void)
{
    struct rt r[40];
    pthread_t t[40];
    int good = 0;

    start_pair();
    for (int i = 0; i < 40; i++) {
        r[i] = (struct rt){.n = 256 * 1024, .fd = dial(port)};
        pthread_create(&t[i], NULL, rt_main, &r[i]);
        echo(far_end(i));
    }
    for (int i = 0; i < 40; i++) {
        pthread_join(t[i], NULL);
        good += r[i].rc == 0;
    }
    CHECK(good == 40, "40 streams at once each echo 256 KiB exactly, half-closed after");
    end_pair();
}

/* A reader that reads nothing holds back its own stream, never another. */
static void test_stalled(void)
{
    static unsigned char chunk[65536];
    size_t sent = 0, got = 0;
    int a, fa, quiet = 0;
    struct rt rb;
    pthread_t tb;
    ssize_t n;

    start_pair();
    a = dial(port);
    fa = far_end(0);
    fcntl(a, F_SETFL, O_NONBLOCK);
    for (int64_t until = now_ms() + 5000; now_ms() < until && quiet < 20 && sent < (64u << 20);) {
        n = write(a, chunk, sizeof(chunk));
        if (n > 0)
            sent += (size_t)n, quiet = 0;
        else
            quiet++, poll(NULL, 0, 10);
    }
    CHECK(quiet >= 20 && sent < (16u << 20), "a stalled stream's writer is held back (windows)");
    rb = (struct rt){.n = 4 << 20, .fd = dial(port)};
    pthread_create(&tb, NULL, rt_main, &rb);
    echo(far_end(1));
    pthread_join(tb, NULL);
    CHECK(rb.rc == 0, "meanwhile another stream echoes 4 MiB");
    shutdown(a, SHUT_WR);
    fcntl(fa, F_SETFL, O_NONBLOCK);
    for (int64_t until = now_ms() + 5000; now_ms() < until && got < sent;) {
        struct pollfd p = {.fd = fa, .events = POLLIN};
        poll(&p, 1, 100);
        n = read(fa, chunk, sizeof(chunk));
        got += n > 0 ? (size_t)n : 0;
    }
    CHECK(got == sent, "the stalled stream's bytes all arrive once read");
    close(a), close(fa);
    end_pair();
}

static int ends_within(int fd, int ms)
{
    char c;
    struct pollfd p = {.fd = fd, .events = POLLIN};

    return poll(&p, 1, ms) == 1 && read(fd, &c, 1) <= 0;
}

static void test_tunnel_end(void)
{
    int c[5], ended = 0;

    start_pair();
    for (int i = 0; i < 5; i++) {
        c[i] = dial(port);
        far_end(i);
    }
    refuse = 1;
    int r = dial(port);
    CHECK(ends_within(r, 2000), "a stream the accepter refuses ends its client's connection");
    close(r);
    refuse = 0;
    close(accepter.fd); /* the tunnel cut under the opener */
    accepter.fd = -1;
    for (int i = 0; i < 5; i++) {
        ended += ends_within(c[i], 2000);
        close(c[i]);
    }
    CHECK(ended == 5, "the tunnel's end ends every stream's connection");
    pthread_join(topen, NULL);
    CHECK(opener.rc <= 0, "and the opener's loop returns");
    topen = pthread_self(); /* joined */
    stop(&accepter);
    pthread_join(taccept, NULL);
    h2b_free(opener.b), h2b_free(accepter.b);
    close(opener.fd), close(opener.lfd), close(opener.stop), close(accepter.stop);
}

/* A peer that is not HTTP/2 (a hostile worker) ends the tunnel at once. */
static void test_garbage(void)
{
    int sv[2];
    struct end e;
    struct h2b_io io;
    int64_t t0;

    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
    e = (struct end){.fd = sv[0], .lfd = -1, .stop = -1};
    io = (struct h2b_io){.ctx = &e.fd, .recv = s_recv, .send = s_send, .fd = sv[0]};
    e.b = h2b_new(H2B_ACCEPTER, &io, accept_cb, NULL);
    if (write(sv[1], "GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff garbage garbage", 45) != 45)
        perror("write");
    t0 = now_ms();
    e.rc = h2b_run(e.b, -1, NULL, -1, 500, 5000);
    CHECK(e.rc == -1 && now_ms() - t0 < 1000,
          "garbage instead of a connection preface: -1 at once");
    h2b_free(e.b);
    close(sv[0]), close(sv[1]);
}

int main(void)
{
    srand((unsigned)time(NULL));
    test_concurrent();
    test_stalled();
    test_tunnel_end();
    test_garbage();
    printf("%s\n", failed ? "h2bridge: FAILED" : "h2bridge: all passed");
    return failed;
}
