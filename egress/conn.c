/* conn.c: a connection's life: read the head, judge the destination, dial
 * one of the addresses that were judged (or the upstream), answer, relay or
 * intercept. Every refusal before the relay is answered, logged and closed
 * here. A connection keeps the configuration it started with (live.h). */
#include "conn.h"

#include "addr_class.h"
#include "decide.h"
#include "http_body.h"
#include "http_head.h"
#include "intercept.h"
#include "io.h"
#include "live.h"
#include "outbound.h"
#include "relay.h"
#include "reply.h"
#include "resolve.h"
#include "transform.h"

#include <errno.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define HEAD_TIMEOUT_MS 30000
#define WRITE_TIMEOUT_MS 30000
#define IDLE_TIMEOUT_MS (10 * 60 * 1000)
#define THREAD_STACK (1024 * 1024) /* getaddrinfo and ASan's redzones */

static atomic_int active;

struct conn {
    int fd;
    const struct egress_conf *conf;
    struct live *live; /* referenced for the connection's life */
    char buf[HTTP_HEAD_MAX];
    size_t got, head_len;
    struct http_req req;
};

struct target {
    bool literal;
    char name[HOSTNAME_MAX + 1];
    struct ipaddr addrs[RESOLVE_MAX]; /* resolved, or the literal */
    size_t n;
    struct ipaddr ok[RESOLVE_MAX]; /* judged and allowed: the only ones dialled */
    size_t n_ok;
};

/* 0 with a complete head, an HTTP status to answer, or -1 to just close. */
static int read_head(struct conn *c)
{
    int64_t deadline = io_now_ms() + HEAD_TIMEOUT_MS;

    for (;;) {
        enum head_scan s = http_head_scan(c->buf, c->got, &c->head_len);
        if (s == HEAD_COMPLETE)
            return 0;
        if (s == HEAD_BAD)
            return 400;
        if (c->got == sizeof(c->buf))
            return 431;
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        int left = io_left_ms(deadline), r = left ? poll(&pfd, 1, left) : 0;
        if (r == 0)
            return 408;
        ssize_t n = r > 0 ? recv(c->fd, c->buf + c->got, sizeof(c->buf) - c->got, 0) : -1;
        if (n > 0)
            c->got += (size_t)n;
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            return -1;
    }
}

static void refuse(struct conn *c, int status, const struct ipaddr *addr, const char *reason,
                   const char *body)
{
    reply_log(c->live->s.sandbox, false, c->head_len ? &c->req : NULL, addr, reason);
    reply_error(c->fd, status, body, io_now_ms() + WRITE_TIMEOUT_MS);
}

static void refuse_verdict(struct conn *c, enum verdict v, const struct target *t)
{
    const char *host = c->req.host;
    const struct ipaddr *addr = t->n ? &t->addrs[0] : NULL;
    char body[HOSTNAME_MAX + 128];

    for (size_t i = 0; v == V_DENY_PRIVATE && i < t->n; i++)
        if (addr_is_blocked(&t->addrs[i]))
            addr = &t->addrs[i]; /* the log names the address that refused it */
    if (v == V_CANNOT_RESOLVE) {
        snprintf(body, sizeof(body), "corral egress: cannot resolve %s", host);
        refuse(c, 502, NULL, "cannot-resolve", body);
    } else if (v == V_DENY_PRIVATE) {
        snprintf(body, sizeof(body), "corral egress: %s %s a private or reserved address", host,
                 t->literal ? "is" : "resolves to");
        refuse(c, 403, addr, "private-address", body);
    } else if (v == V_DENY_LITERAL) {
        snprintf(body, sizeof(body),
                 "corral egress: %s: IP literal not allowed by this sandbox's policy", host);
        refuse(c, 403, addr, "ip-literal", body);
    } else {
        snprintf(body, sizeof(body), "corral egress: %s is not allowed by this sandbox's policy",
                 host);
        refuse(c, 403, v == V_DENY_NAME && t->n ? addr : NULL, "policy", body);
    }
}

/* The policy's answer; on V_ALLOW t->ok holds the addresses to dial. */
static enum verdict judge(const struct conn *c, struct target *t)
{
    const struct egress_conf *conf = c->conf;
    const struct http_req *r = &c->req;
    const struct policy *p = &c->live->s.policy;

    if (ipaddr_parse(r->host, &t->addrs[0]) == 0) {
        t->literal = true;
        t->n = 1;
        enum verdict v = decide_literal(p, &t->addrs[0]);
        t->ok[0] = t->addrs[0];
        t->n_ok = v == V_ALLOW;
        return v;
    }
    enum verdict early = decide_name_early(p, t->name);
    if (early == V_DENY_NAME)
        return early;
    const struct ipaddr *stand_in = egress_conf_test_host(conf, t->name);
    if (stand_in) {
        t->addrs[0] = *stand_in;
        t->n = 1;
        return decide_stand_in(p, early, stand_in, t->ok, &t->n_ok);
    }
    t->n = resolve_name(t->name, t->addrs, RESOLVE_MAX);
    return decide_name_addrs(p, early, t->addrs, t->n, t->ok, &t->n_ok);
}

/* Sends what must precede the relay: the 200 of a tunnel, or the request's
 * head (rewritten, with rule headers when `head` is given); then what the
 * client sent after its head: all of it into a tunnel, only this request's
 * body to a forwarded request's upstream. */
static int start(struct conn *c, int up, struct http_body *body, const char *head, size_t head_len)
{
    int64_t deadline = io_now_ms() + WRITE_TIMEOUT_MS;
    static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    int rc;

    if (c->req.kind == HTTP_CONNECT) {
        rc = io_write_all(c->fd, established, sizeof(established) - 1, deadline);
    } else if (head) {
        rc = io_write_all(up, head, head_len, deadline);
    } else {
        size_t cap = c->head_len + HOSTNAME_MAX + 64;
        char *out = malloc(cap);
        long n = out ? http_head_rewrite(c->buf, c->head_len, &c->req, out, cap) : -1;
        rc = n < 0 ? -1 : io_write_all(up, out, (size_t)n, deadline);
        free(out);
    }
    long more = (long)(c->got - c->head_len);
    if (c->req.kind == HTTP_ABSOLUTE)
        more = http_body_feed(body, c->buf + c->head_len, (size_t)more);
    if (rc == 0 && more > 0)
        rc = io_write_all(up, c->buf + c->head_len, (size_t)more, deadline);
    return more < 0 ? -1 : rc;
}

/* A tunnel is decided once, by its target; a forwarded request is relayed
 * alone: the bytes after its body (a pipelined or kept-alive request, maybe
 * for another host) are never read, and closing the connection makes the
 * client send them anew, to be decided (decision 0065). */
static void relay(struct conn *c, int up, const char *head, size_t head_len)
{
    struct http_body framing;

    http_body_start(&framing, &c->req);
    if (start(c, up, &framing, head, head_len) == 0)
        relay_run(c->fd, up, IDLE_TIMEOUT_MS, c->req.kind == HTTP_CONNECT ? NULL : &framing);
}

/* The socket to the judged destination, or -1 (refused and answered). */
static int dial(struct conn *c, const struct target *t, size_t *used)
{
    struct dest d = {.shown = c->req.host,
                     .name = t->literal ? NULL : t->name,
                     .literal = t->literal ? &t->addrs[0] : NULL,
                     .ok = t->ok,
                     .n_ok = t->n_ok,
                     .port = c->req.port};
    const char *reason;
    char body[HOSTNAME_MAX + 128];
    int up = outbound_dial(c->conf, &c->live->s.upstream, &d, used, &reason, body, sizeof(body));

    if (up < 0)
        refuse(c, 502, &t->ok[0], reason, body);
    return up;
}

/* The forwarded head with the rule's headers, built before anything is
 * dialled: a placeholder that does not resolve refuses the request before
 * the server hears of it. 0, or -1 (refused and answered). */
static int transformed(struct conn *c, const struct rule_set *set, const struct target *t,
                       char **head, size_t *len)
{
    size_t cap = c->head_len + HOSTNAME_MAX + 64;
    char *plain = malloc(cap), msg[512];
    long n = plain ? http_head_rewrite(c->buf, c->head_len, &c->req, plain, cap) : -1;
    int rc = n < 0 ? -1
                   : transform_head(set, c->live->s.resolver, t->literal ? c->req.host : t->name,
                                    plain, (size_t)n, head, len, msg, sizeof(msg));

    if (n < 0)
        snprintf(msg, sizeof(msg), "corral egress: out of memory");
    if (rc != 0)
        refuse(c, 502, &t->ok[0], n < 0 ? "out-of-memory" : "placeholder", msg);
    free(plain);
    return rc;
}

static void forward(struct conn *c, const struct target *t, const struct rule_set *set)
{
    char *head = NULL;
    size_t head_len = 0, used;

    if (set && transformed(c, set, t, &head, &head_len) != 0)
        return;
    int up = dial(c, t, &used);
    if (up >= 0) {
        reply_log(c->live->s.sandbox, true, &c->req, &t->ok[used], "ok");
        if (set)
            transform_log(c->live->s.sandbox, t->literal ? c->req.host : t->name, c->req.method,
                          set);
        relay(c, up, head, head_len);
        close(up);
    }
    if (head)
        OPENSSL_cleanse(head, head_len);
    free(head);
}

static void intercept(struct conn *c, const struct target *t, const struct rule_set *set)
{
    size_t used;

    if (c->got > c->head_len) {
        refuse(c, 400, NULL, "bad-request",
               "corral egress: bytes sent before the tunnel was established");
        return;
    }
    int up = dial(c, t, &used);
    if (up < 0)
        return;
    reply_log(c->live->s.sandbox, true, &c->req, &t->ok[used], "intercept");
    struct icpt ic = {.cli = c->fd,
                      .up = up,
                      .live = c->live,
                      .set = set,
                      .req = &c->req,
                      .host = t->literal ? c->req.host : t->name,
                      .literal = t->literal,
                      .addr = &t->ok[used]};
    intercept_run(&ic);
    close(up);
}

/* 0 with a parsed head and a checked host, or -1 (refused and answered). */
static int take_request(struct conn *c, struct target *t)
{
    const char *why;
    char body[160];
    int st = read_head(c);

    if (st != 0) {
        c->head_len = 0;
        if (st == 400)
            refuse(c, 400, NULL, "bad-request", "corral egress: malformed request head");
        else if (st == 408)
            refuse(c, 408, NULL, "head-timeout",
                   "corral egress: request head not received in time");
        else if (st == 431)
            refuse(c, 431, NULL, "head-too-large", "corral egress: request head over 16 KiB");
        return -1;
    }
    if (http_head_parse(c->buf, c->head_len, &c->req, &why) != 0) {
        c->head_len = 0;
        snprintf(body, sizeof(body), "corral egress: bad request: %s", why);
        refuse(c, 400, NULL, "bad-request", body);
        return -1;
    }
    if (ipaddr_parse(c->req.host, &t->addrs[0]) != 0 &&
        (c->req.bracketed || hostname_normalize(c->req.host, t->name) != 0 ||
         !hostname_resolvable(t->name))) {
        refuse(c, 400, NULL, "bad-host",
               "corral egress: bad request: not a host name or IP address");
        return -1;
    }
    return 0;
}

static void serve(struct conn *c)
{
    struct target t = {0};

    if (take_request(c, &t) != 0)
        return;
    enum verdict v = judge(c, &t);
    if (v != V_ALLOW) {
        refuse_verdict(c, v, &t);
        return;
    }
    /* Rules never grant: only an allowed destination gets here. */
    const struct rule_set *set = rules_match(&c->live->s.rules, t.literal ? c->req.host : t.name);
    if (set && c->req.kind == HTTP_CONNECT)
        intercept(c, &t, set);
    else
        forward(c, &t, set);
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    int one = 1;

    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    serve(c);
    reply_close(c->fd);
    live_release(c->live);
    free(c);
    atomic_fetch_sub(&active, 1);
    return NULL;
}

/* Answered from the accept loop: no waiting on the client. */
static void reply_busy(int fd, const char *sandbox)
{
    reply_log(sandbox, false, NULL, NULL, "too-many-connections");
    reply_error(fd, 503, "corral egress: too many connections", io_now_ms());
    shutdown(fd, SHUT_WR);
    close(fd);
}

bool conn_start(int fd, const struct egress_conf *conf, struct live *live)
{
    pthread_attr_t attr;
    pthread_t tid;
    struct conn *c = NULL;
    int rc = -1;

    if (atomic_fetch_add(&active, 1) < CONN_MAX && (c = malloc(sizeof(*c)))) {
        c->fd = fd;
        c->conf = conf;
        c->live = live;
        c->got = c->head_len = 0;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, THREAD_STACK);
        rc = pthread_create(&tid, &attr, conn_main, c);
        pthread_attr_destroy(&attr);
    }
    if (rc == 0)
        return true;
    free(c);
    atomic_fetch_sub(&active, 1);
    reply_busy(fd, live->s.sandbox);
    live_release(live);
    return false;
}
