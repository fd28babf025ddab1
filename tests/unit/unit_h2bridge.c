/* Unit test of common/h2bridge.c: the worker tunnel's framing (decision 0087)
 * over a real socket pair, an opener and an accepter each on a thread of its
 * own, real local sockets on both sides (loopback TCP into the opener,
 * socket pairs out of the accepter). Standalone (build/bin/unit-h2bridge):
 * prints a line per check, exits 1 on any failure. Every wait is bounded, and
 * an alarm ends a run that hangs anyway. */
#include "h2bridge.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
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

#define MIB (1u << 20)
#define MAX_FAR 128

static int failed;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        int ok_ = !!(c);                                                                           \
        printf("%s: ", ok_ ? "ok" : "FAIL");                                                       \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
        failed |= !ok_;                                                                            \
    } while (0)

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fill(unsigned char *d, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        d[i] = (unsigned char)(x >> 24);
    }
}

static int join_within(pthread_t t, int ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000)
        ts.tv_sec++, ts.tv_nsec -= 1000000000;
    return pthread_timedjoin_np(t, NULL, &ts) == 0 ? 0 : -1;
}

/* The accepter's side: each stream it takes gets a socket pair, whose far
 * end the test uses, in the order they came. */
struct farends {
    pthread_mutex_t mu;
    int fd[MAX_FAR];
    int n, calls, refuse;
};

static int accept_cb(void *ctx, const char *authority)
{
    struct farends *f = ctx;
    int sv[2], rc = -1;

    pthread_mutex_lock(&f->mu);
    f->calls++;
    if (!f->refuse && strcmp(authority, "dataport") == 0 && f->n < MAX_FAR &&
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
        f->fd[f->n++] = sv[1];
        rc = sv[0];
    }
    pthread_mutex_unlock(&f->mu);
    return rc;
}

/* The i-th far end, now the test's (-1 when none came within 5 s). */
static int far_end(struct farends *f, int i)
{
    for (int64_t until = now_ms() + 5000; now_ms() < until; poll(NULL, 0, 2)) {
        int fd = -1;
        pthread_mutex_lock(&f->mu);
        if (i < f->n)
            fd = f->fd[i], f->fd[i] = -1;
        pthread_mutex_unlock(&f->mu);
        if (fd >= 0 || i < f->n)
            return fd;
    }
    return -1;
}

struct end {
    struct h2b *b;
    int fd, lfd, stop, rc, joined;
    pthread_t t;
};

struct pair {
    struct end op, ac;
    struct farends far;
    int port, necho;
    pthread_t echo[MAX_FAR];
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

static void set_timeouts(int fd, int bufs)
{
    struct timeval tv = {.tv_sec = 5};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (bufs > 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufs, sizeof(bufs));
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufs, sizeof(bufs));
    }
}

/* Small kernel buffers on the opener's side, so that a stalled stream's
 * backpressure reaches its writer after a few MiB, not after the kernel's
 * autotuned megabytes. Accepted sockets inherit them. */
static int listen_any(int *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), buf = 128 << 10;

    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 128) ||
        getsockname(fd, (struct sockaddr *)&a, &len))
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

static int dial(const struct pair *p, int bufs)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)p->port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    set_timeouts(fd, bufs);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
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

static void echo(struct pair *p, int fd)
{
    if (fd < 0 || p->necho == MAX_FAR) {
        if (fd >= 0)
            close(fd);
        return;
    }
    set_timeouts(fd, 0);
    pthread_create(&p->echo[p->necho++], NULL, echo_main, (void *)(intptr_t)fd);
}

static void start_end(struct end *e, int fd, int lfd, struct farends *far)
{
    struct h2b_io io = {.ctx = &e->fd, .recv = s_recv, .send = s_send, .fd = fd};

    *e = (struct end){.fd = fd, .lfd = lfd, .stop = eventfd(0, EFD_CLOEXEC)};
    e->b = h2b_new(far ? H2B_ACCEPTER : H2B_OPENER, &io, far ? accept_cb : NULL, far);
    pthread_create(&e->t, NULL, run_main, e);
}

static void start_pair(struct pair *p)
{
    int sv[2];

    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->far.mu, NULL);
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv);
    start_end(&p->op, sv[0], listen_any(&p->port), NULL);
    start_end(&p->ac, sv[1], -1, &p->far);
}

static void stop(struct end *e)
{
    uint64_t one = 1;

    if (write(e->stop, &one, sizeof(one)) != sizeof(one))
        perror("eventfd");
}

/* Its loop stopped within ms (0), or not (-1: the test gives up on it). */
static int end_join(struct end *e, int ms)
{
    if (!e->joined && join_within(e->t, ms) == 0)
        e->joined = 1;
    return e->joined ? 0 : -1;
}

static void end_pair(struct pair *p)
{
    stop(&p->op);
    stop(&p->ac);
    if (end_join(&p->op, 3000) || end_join(&p->ac, 3000)) {
        CHECK(0, "a loop ended when asked to (stop_fd)");
        exit(1);
    }
    for (int i = 0; i < p->necho; i++)
        if (join_within(p->echo[i], 3000) != 0)
            CHECK(0, "an echo's stream ended with the tunnel");
    h2b_free(p->op.b);
    h2b_free(p->ac.b);
    for (int i = 0; i < p->far.n; i++)
        if (p->far.fd[i] >= 0)
            close(p->far.fd[i]);
    close(p->op.fd), close(p->ac.fd), close(p->op.lfd), close(p->op.stop), close(p->ac.stop);
    pthread_mutex_destroy(&p->far.mu);
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
    while (got && now_ms() < until) {
        struct pollfd pf = {.fd = fd, .events = (short)(POLLIN | (out < n ? POLLOUT : 0))};
        poll(&pf, 1, 100);
        if (out < n && (pf.revents & POLLOUT)) {
            ssize_t w = write(fd, data + out, n - out);
            out += w > 0 ? (size_t)w : 0;
            if (out == n)
                shutdown(fd, SHUT_WR);
        }
        if (pf.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(fd, got + in, n + 1 - in);
            if (r == 0 || (r < 0 && errno != EAGAIN)) {
                ok = r == 0 && in == n && memcmp(got, data, n) == 0;
                break;
            }
            in += r > 0 ? (size_t)r : 0;
        }
    }
    free(got);
    close(fd);
    return ok ? 0 : -1;
}

struct client {
    pthread_t t;
    size_t n;
    uint64_t seed;
    int fd, rc;
    int64_t ms;
};

static void *client_main(void *arg)
{
    struct client *c = arg;
    unsigned char *d = malloc(c->n);
    int64_t t0 = now_ms();

    c->rc = -1;
    if (d) {
        fill(d, c->n, c->seed);
        c->rc = roundtrip(c->fd, d, c->n, 15000);
    }
    c->ms = now_ms() - t0;
    free(d);
    return NULL;
}

/* 1. Many streams at once, each its own bytes. */
static void test_concurrent(void)
{
    enum { N = 50 };
    static struct client c[N];
    struct pair p;
    int good = 0;

    start_pair(&p);
    for (int i = 0; i < N; i++) {
        c[i] = (struct client){.fd = dial(&p, 0), .n = 256 << 10, .seed = (uint64_t)i + 1};
        pthread_create(&c[i].t, NULL, client_main, &c[i]);
        echo(&p, far_end(&p.far, i));
    }
    for (int i = 0; i < N; i++)
        good += join_within(c[i].t, 20000) == 0 && c[i].rc == 0;
    CHECK(good == N,
          "1. %d of %d concurrent streams echo 256 KiB of their own random bytes exactly", good, N);
    end_pair(&p);
}

struct writer {
    pthread_t t;
    const unsigned char *d;
    size_t n, sent; /* sent: atomic */
    int fd;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    int64_t until = now_ms() + 20000;

    fcntl(w->fd, F_SETFL, O_NONBLOCK);
    for (size_t off = 0; off < w->n && now_ms() < until;) {
        struct pollfd pf = {.fd = w->fd, .events = POLLOUT};
        ssize_t n;
        poll(&pf, 1, 100);
        n = write(w->fd, w->d + off, w->n - off);
        if (n < 0 && errno != EAGAIN)
            break;
        off += n > 0 ? (size_t)n : 0;
        __atomic_store_n(&w->sent, off, __ATOMIC_RELAXED);
    }
    shutdown(w->fd, SHUT_WR);
    return NULL;
}

/* How much the writer got out once it stopped moving for 500 ms; 0 when it
 * never stopped within 5 s. */
static size_t stalled_at(struct writer *w)
{
    size_t last = (size_t)-1;
    int64_t since = now_ms();

    for (int64_t until = now_ms() + 5000; now_ms() < until; poll(NULL, 0, 20)) {
        size_t s = __atomic_load_n(&w->sent, __ATOMIC_RELAXED);
        if (s != last)
            last = s, since = now_ms();
        else if (now_ms() - since >= 500 && s < w->n)
            return s;
    }
    return 0;
}

/* Reads fd to its end (at most 10 s); 1 when that is exactly want. */
static int read_exact(int fd, const unsigned char *want, size_t n)
{
    unsigned char *got = malloc(n + 1);
    size_t in = 0;
    ssize_t r = -1;

    for (int64_t until = now_ms() + 10000; got && now_ms() < until;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        poll(&pf, 1, 100);
        r = recv(fd, got + in, n + 1 - in, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN))
            break;
        in += r > 0 ? (size_t)r : 0;
    }
    r = r == 0 && in == n && memcmp(got, want, n) == 0;
    free(got);
    return (int)r;
}

/* 2. A reader that reads nothing holds back its own stream, never another. */
static void test_stalled(void)
{
    struct pair p;
    struct writer w = {.n = 8 * MIB};
    struct client b = {.n = 4 * MIB, .seed = 99};
    unsigned char *d = malloc(w.n);
    size_t at, after;
    int fa;

    fill(d, w.n, 7);
    w.d = d;
    start_pair(&p);
    w.fd = dial(&p, 64 << 10);
    fa = far_end(&p.far, 0);
    pthread_create(&w.t, NULL, writer_main, &w);
    at = stalled_at(&w);
    CHECK(at > 0 && at < 4 * MIB,
          "2. a stream whose far end reads nothing holds its writer back (at %zu KiB of 8 MiB)",
          at >> 10);
    b.fd = dial(&p, 0);
    pthread_create(&b.t, NULL, client_main, &b);
    echo(&p, far_end(&p.far, 1));
    CHECK(join_within(b.t, 15000) == 0 && b.rc == 0 && b.ms < 5000,
          "2. meanwhile another stream echoes 4 MiB (%lld ms)", (long long)b.ms);
    after = __atomic_load_n(&w.sent, __ATOMIC_RELAXED);
    CHECK(after == at, "2. and the stalled stream has not moved meanwhile");
    CHECK(read_exact(fa, d, w.n), "2. once read, the stalled stream's 8 MiB all arrive intact");
    CHECK(join_within(w.t, 5000) == 0, "2. and its writer finishes");
    close(w.fd), close(fa);
    end_pair(&p);
    free(d);
}

struct drain {
    pthread_t t;
    int fd;
    size_t got;
    int saw_eof;
    unsigned char buf[512 << 10];
};

/* A far end that reads to the client's end, then answers all it got: the
 * answer can only come back over the half the client left open. */
static void *drain_main(void *arg)
{
    struct drain *r = arg;
    ssize_t n = -1;

    while (r->got < sizeof(r->buf) &&
           (n = read(r->fd, r->buf + r->got, sizeof(r->buf) - r->got)) > 0)
        r->got += (size_t)n;
    r->saw_eof = r->got < sizeof(r->buf) && n == 0;
    for (size_t off = 0; r->saw_eof && off < r->got; off += (size_t)n)
        if ((n = write(r->fd, r->buf + off, r->got - off)) <= 0)
            break;
    close(r->fd);
    return NULL;
}

/* 3. Half-close both ways. */
static void test_half_close(void)
{
    static struct drain r;
    static unsigned char d[300 << 10];
    struct pair p;
    int fd, sent = 1;

    fill(d, sizeof(d), 3);
    start_pair(&p);
    fd = dial(&p, 0);
    r = (struct drain){.fd = far_end(&p.far, 0)};
    set_timeouts(r.fd, 0);
    pthread_create(&r.t, NULL, drain_main, &r);
    for (size_t off = 0; sent && off < sizeof(d);) {
        ssize_t n = write(fd, d + off, sizeof(d) - off);
        sent = n > 0;
        off += sent ? (size_t)n : 0;
    }
    shutdown(fd, SHUT_WR);
    CHECK(read_exact(fd, d, sizeof(d)),
          "3. after its half-close, the client still reads the whole echo, then the end");
    CHECK(join_within(r.t, 5000) == 0 && r.saw_eof && r.got == sizeof(d),
          "3. the far side saw the client's end after exactly its %zu bytes", sizeof(d));
    close(fd);
    end_pair(&p);
}

/* fd's connection ends (EOF or an error) before the deadline: 1. What
 * comes before the end is read and dropped. */
static int ends_by(int fd, int64_t deadline)
{
    char c[65536];

    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int left = (int)(deadline - now_ms());
        if (left < 0 || poll(&pf, 1, left) != 1)
            return 0;
        ssize_t n = recv(fd, c, sizeof(c), MSG_DONTWAIT);
        if (n <= 0)
            return n == 0 || errno != EAGAIN;
    }
}

static int ping(int fd)
{
    char buf[4];

    return write(fd, "ping", 4) == 4 && read(fd, buf, 4) == 4 && memcmp(buf, "ping", 4) == 0;
}

/* 4. The tunnel's end ends every stream: the tunnel cut (cut) or one end's
 * stop_fd. */
static void tunnel_end(int cut)
{
    struct pair p;
    int c[5], up = 0, ended = 0;
    int64_t t0, deadline;

    start_pair(&p);
    for (int i = 0; i < 5; i++) {
        c[i] = dial(&p, 0);
        echo(&p, far_end(&p.far, i));
        up += ping(c[i]);
    }
    t0 = now_ms();
    deadline = t0 + 1000;
    if (cut)
        shutdown(p.ac.fd, SHUT_RDWR);
    else
        stop(&p.op);
    for (int i = 0; i < 5; i++) {
        ended += ends_by(c[i], deadline);
        close(c[i]);
    }
    CHECK(up == 5 && ended == 5, "4. %s: all %d of 5 open streams' clients see the end within 1 s",
          cut ? "the tunnel cut" : "the opener's stop_fd", ended);
    CHECK(end_join(&p.op, (int)(deadline - now_ms()) + 200) == 0 && p.op.rc == 0,
          "4. and the opener's h2b_run returns 0 (%lld ms)", (long long)(now_ms() - t0));
    if (cut)
        CHECK(end_join(&p.ac, 1000) == 0, "4. and so does the accepter's (rc %d)", p.ac.rc);
    end_pair(&p);
}

/* 5. The accepter refuses: the opener's client sees its connection end. */
static void test_refused(void)
{
    struct pair p;
    int fd, ok;

    start_pair(&p);
    pthread_mutex_lock(&p.far.mu);
    p.far.refuse = 1;
    pthread_mutex_unlock(&p.far.mu);
    fd = dial(&p, 0);
    ok = ends_by(fd, now_ms() + 2000);
    close(fd);
    pthread_mutex_lock(&p.far.mu);
    ok = ok && p.far.calls == 1;
    p.far.refuse = 0;
    pthread_mutex_unlock(&p.far.mu);
    CHECK(ok, "5. a stream the accept callback refuses ends its client's connection");
    fd = dial(&p, 0);
    echo(&p, far_end(&p.far, 0));
    CHECK(ping(fd), "5. and the tunnel carries the next stream");
    close(fd);
    end_pair(&p);
}

struct sender {
    pthread_t t;
    const unsigned char *d;
    size_t n;
    int fd;
};

/* A far end that sends n bytes and closes: a download. */
static void *sender_main(void *arg)
{
    struct sender *w = arg;
    for (size_t off = 0; off < w->n;) {
        ssize_t k = write(w->fd, w->d + off, w->n - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    close(w->fd);
    return NULL;
}

/* 7. Streams that end while the opener still holds their last bytes (the
 * client reads only after the far end is done) give the connection's window
 * back: 128 of them carry 128 MiB, 4 times the 32 MiB window. */
static void test_window_returns(void)
{
    enum { N = 128, SIZE = 1 << 20 };
    static unsigned char d[SIZE];
    struct pair p;
    int good = 0;

    fill(d, sizeof(d), 11);
    start_pair(&p);
    /* tiny kernel buffers towards the client: the bytes stay in the bridge */
    setsockopt(p.op.lfd, SOL_SOCKET, SO_SNDBUF, &(int){4096}, sizeof(int));
    for (int i = 0; i < N; i++) {
        int fd = dial(&p, 4096);
        struct sender w = {.d = d, .n = SIZE, .fd = far_end(&p.far, i)};
        if (fd < 0 || w.fd < 0)
            break;
        set_timeouts(w.fd, 0);
        shutdown(fd, SHUT_WR);
        pthread_create(&w.t, NULL, sender_main, &w);
        if (join_within(w.t, 8000) != 0) { /* its write timed out (5 s): it is ending */
            pthread_join(w.t, NULL);
            close(fd);
            break;
        }
        /* a pause that is the point: the stream's end reaches the opener
         * while its last bytes wait there for the client */
        poll(NULL, 0, 10);
        good += read_exact(fd, d, SIZE);
        close(fd);
    }
    CHECK(good == N, "7. %d of %d streams that end with bytes still buffered each deliver 1 MiB",
          good, N);
    end_pair(&p);
}

/* A bridge of one role on a thread against the test as its raw peer (p
 * the peer's end of the tunnel); the opener with one stream (its client
 * local), for the peer's frames to be about. */
struct raw {
    struct end e;
    struct farends far;
    int peer, local;
};

static void raw_start(struct raw *r, enum h2b_role role)
{
    int sv[2], lsv[2] = {-1, -1};

    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->far.mu, NULL);
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv);
    r->peer = sv[1];
    r->e = (struct end){.fd = sv[0], .lfd = -1, .stop = -1};
    r->e.b = h2b_new(role,
                     &(struct h2b_io){.ctx = &r->e.fd, .recv = s_recv, .send = s_send, .fd = sv[0]},
                     accept_cb, &r->far);
    if (role == H2B_OPENER && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, lsv) == 0)
        h2b_open(r->e.b, lsv[0], "dataport"); /* before its loop runs: same thread */
    r->local = lsv[1];
    pthread_create(&r->e.t, NULL, run_main, &r->e);
}

/* What the bridge sends until it is quiet for 150 ms (at most 2 s). */
static size_t raw_read(struct raw *r, unsigned char *keep, size_t cap)
{
    unsigned char sink[4096];
    size_t got = 0;

    for (int64_t until = now_ms() + 2000; now_ms() < until;) {
        struct pollfd pf = {.fd = r->peer, .events = POLLIN};
        if (poll(&pf, 1, 150) != 1)
            break;
        ssize_t n;
        if (got < cap)
            n = read(r->peer, keep + got, cap - got);
        else
            n = read(r->peer, sink, sizeof(sink));
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

static int raw_write(struct raw *r, const unsigned char *d, size_t n)
{
    size_t off = 0;

    for (int64_t until = now_ms() + 3000; off < n && now_ms() < until;) {
        struct pollfd pf = {.fd = r->peer, .events = POLLOUT};
        poll(&pf, 1, 100);
        ssize_t w = write(r->peer, d + off, n - off);
        off += w > 0 ? (size_t)w : 0;
        if (w < 0 && errno != EAGAIN)
            break;
    }
    return off == n ? 0 : -1;
}

/* The bridge's loop has returned within ms, the peer still there: its rc
 * (the test stops when it did not). The local client stays the caller's. */
static int raw_end(struct raw *r, int ms)
{
    unsigned char sink[4096];
    int rc = -2;

    for (int64_t until = now_ms() + ms; now_ms() < until && !r->e.joined;) {
        while (read(r->peer, sink, sizeof(sink)) > 0)
            ; /* what it still sends: never let it block on a full tunnel */
        end_join(&r->e, 50);
    }
    if (!r->e.joined) {
        CHECK(0, "the loop ends against a hostile peer");
        exit(1);
    }
    rc = r->e.rc;
    h2b_free(r->e.b);
    for (int i = 0; i < r->far.n; i++)
        close(r->far.fd[i]);
    close(r->e.fd), close(r->peer);
    pthread_mutex_destroy(&r->far.mu);
    return rc;
}

/* One HTTP/2 frame at out (RFC 9113 4.1); len is what the header says, plen
 * what follows it (a lie between them is the point of some tests). */
static size_t frame(unsigned char *out, uint32_t len, uint8_t type, uint8_t flags, uint32_t sid,
                    const void *payload, size_t plen)
{
    out[0] = (unsigned char)(len >> 16), out[1] = (unsigned char)(len >> 8);
    out[2] = (unsigned char)len, out[3] = type, out[4] = flags;
    out[5] = (unsigned char)(sid >> 24), out[6] = (unsigned char)(sid >> 16);
    out[7] = (unsigned char)(sid >> 8), out[8] = (unsigned char)sid;
    if (plen)
        memcpy(out + 9, payload, plen);
    return 9 + plen;
}

#define F(len, type, flags, sid, p, plen) (n += frame(buf + n, len, type, flags, sid, p, plen))
enum { DATA = 0, HEADERS = 1, RST = 3, SETTINGS = 4, PUSH = 5, GOAWAY = 7, WINUP = 8 };
enum { END_STREAM = 1, ACK = 1, END_HEADERS = 4 };

enum { ENDS = 1, HELLO = 2 };

/* A hostile accepter's bytes, after the opener's first flight. The local
 * client's connection ends within 1 s (HELLO: after the stream's "hello");
 * ENDS: the loop ends by itself too (a protocol error), with want_rc (2:
 * either of 0 and -1); else it goes on until the peer closes. Never a crash. */
static void hostile_opener(const char *what, const unsigned char *buf, size_t n, int want_rc,
                           int how)
{
    struct raw r;
    unsigned char hello[6];
    int64_t t0;
    int rc, said, ended, by_itself;

    raw_start(&r, H2B_OPENER);
    raw_read(&r, NULL, 0);
    t0 = now_ms();
    raw_write(&r, buf, n);
    poll(&(struct pollfd){.fd = r.local, .events = POLLIN}, 1, 1000);
    said = recv(r.local, hello, sizeof(hello), MSG_DONTWAIT) == 5 && !memcmp(hello, "hello", 5);
    ended = ends_by(r.local, t0 + 1000);
    by_itself = end_join(&r.e, 1000) == 0;
    shutdown(r.peer, SHUT_WR);
    rc = raw_end(&r, 2000);
    close(r.local);
    CHECK(ended && (!(how & HELLO) || said) && by_itself == !!(how & ENDS) &&
              (!(how & ENDS) || want_rc == 2 || rc == want_rc),
          "6. opener against %s: its client's connection ends%s; the loop %s (rc %d, %lld ms)",
          what, how & HELLO ? " after the stream's bytes" : "",
          how & ENDS ? "ends by itself" : "goes on", rc, (long long)(now_ms() - t0));
}

static void test_hostile_opener(void)
{
    static unsigned char buf[3 << 20];
    static const unsigned char st200 = 0x88, bad_window[4] = {0x7f, 0xff, 0xff, 0xff};
    static const unsigned char huge[16384];
    static const char junk[] = "HTTP/1.1 200 OK\r\n\r\n\x00\xff not HTTP/2 at all, garbage";
    size_t n = 0, s;

    hostile_opener("garbage (no HTTP/2)", (const unsigned char *)junk, sizeof(junk) - 1, -1, ENDS);
    F(0, SETTINGS, 0, 0, NULL, 0), F(0, SETTINGS, ACK, 0, NULL, 0);
    s = n;
    F(1, HEADERS, END_HEADERS, 2, &st200, 1); /* a stream the accepter opens */
    hostile_opener("a stream opened by the accepter", buf, n, 2, ENDS);
    n = s;
    F(0xffffff, DATA, 0, 1, NULL, 0);
    hostile_opener("a frame of 16 MiB announced", buf, n, 2, ENDS);
    n = s;
    F(1, HEADERS, END_HEADERS, 1, &st200, 1), F(5, DATA, 0, 1, "hello", 5);
    F(4, RST, 0, 1, "\0\0\0\x08", 4), F(5, DATA, 0, 1, "again", 5);
    F(4, WINUP, 0, 0, bad_window, 4), F(4, WINUP, 0, 0, bad_window, 4);
    hostile_opener("data after its reset, a window overflow", buf, n, 2, ENDS | HELLO);
    n = s;
    F(1, HEADERS, END_HEADERS, 1, &st200, 1);
    for (int i = 0; i < 160; i++) /* 2.5 MiB on a 1 MiB window nobody reads */
        F(sizeof(huge), DATA, 0, 1, huge, sizeof(huge));
    hostile_opener("its stream's window overrun", buf, n, 2, 0);
    n = s;
    F(1, HEADERS, END_HEADERS, 1, "\x8d", 1); /* :status 404 */
    F(8, GOAWAY, 0, 0, "\0\0\0\x01\0\0\0\0", 8);
    hostile_opener("a 404, then GOAWAY", buf, n, 0, ENDS);
}

/* The accepter against garbage, and against a request that is no CONNECT. */
static void test_hostile_accepter(void)
{
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    /* :method GET, :scheme http, :path /, :authority dataport (HPACK) */
    static const unsigned char get[] = {0x82, 0x86, 0x84, 0x41, 8,   'd', 'a',
                                        't',  'a',  'p',  'o',  'r', 't'};
    unsigned char buf[256], in[4096];
    size_t n = 0, got;
    int refused = 0, rc;
    struct raw r;

    raw_start(&r, H2B_ACCEPTER);
    raw_read(&r, NULL, 0);
    raw_write(&r, (const unsigned char *)"GET / HTTP/1.1\r\nHost: x\r\n\r\n\xff garbage", 36);
    rc = raw_end(&r, 2000);
    CHECK(rc == -1, "6. accepter against garbage (no preface): -1 (rc %d)", rc);
    raw_start(&r, H2B_ACCEPTER);
    memcpy(buf, preface, sizeof(preface) - 1);
    n = sizeof(preface) - 1;
    F(0, SETTINGS, 0, 0, NULL, 0);
    F(sizeof(get), HEADERS, END_HEADERS | END_STREAM, 1, get, sizeof(get));
    raw_write(&r, buf, n);
    got = raw_read(&r, in, sizeof(in));
    for (size_t off = 0; off + 9 <= got;
         off += 9 + ((size_t)in[off] << 16 | in[off + 1] << 8 | in[off + 2]))
        refused |= in[off + 3] == RST && !memcmp(in + off + 5, "\0\0\0\1", 4);
    shutdown(r.peer, SHUT_WR);
    rc = raw_end(&r, 2000);
    CHECK(refused && r.far.calls == 0 && rc == 0,
          "6. accepter: a GET (no CONNECT) is reset, never reaches the accept callback");
}

int main(void)
{
    alarm(60); /* a hang anyway is a failure, not a stuck run */
    test_concurrent();
    test_stalled();
    test_half_close();
    tunnel_end(1);
    tunnel_end(0);
    test_refused();
    test_hostile_opener();
    test_hostile_accepter();
    test_window_returns();
    printf("%s\n", failed ? "h2bridge: FAILED" : "h2bridge: all passed");
    return failed;
}
