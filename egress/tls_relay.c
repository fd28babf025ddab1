/* tls_relay.c: both TLS connections of an intercepted tunnel, driven by one
 * thread (an SSL object may not be read and written from two at once).
 *
 * Client to server, the proxy reads HTTP/1.1: each request head is parsed and
 * sent on with the rule's headers set, and its body follows by its framing
 * (http_body.c), so the next head is found and rewritten too: keep-alive
 * works and no request passes unrewritten. Server to client, bytes are
 * relayed as they come, unread: responses are not changed, so where one ends
 * does not matter, and nothing is buffered beyond BACK_CAP. After a request
 * carrying Upgrade (a WebSocket), the client's bytes are no longer HTTP and
 * pass unread too.
 *
 * Each loop pass tries every step until none moves a byte, then polls for
 * exactly what the last attempts asked for (SSL's WANT_READ/WANT_WRITE):
 * a TLS read may need the socket writable and a write readable. */
#include "intercept.h"

#include "http_body.h"
#include "io.h"
#include "reply.h"
#include "tls_io.h"
#include "transform.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define IN_CAP HTTP_HEAD_MAX
#define BACK_CAP (64 * 1024)
#define OUT_HIGH (64 * 1024) /* body bytes wait while this much is unsent */
#define IDLE_MS (10 * 60 * 1000)
#define ANSWER_MS 5000

enum rq_state { RQ_HEAD, RQ_BODY, RQ_RAW };

struct side {
    SSL *ssl;
    int fd;
    bool eof, shut, failed;
    short want; /* poll events the last attempts asked for */
};

struct relay {
    struct side cli, srv;
    char in[IN_CAP]; /* the client's bytes not yet sent on */
    size_t in_len;
    char *out; /* for the server: rewritten heads, bodies */
    size_t out_len, out_cap;
    char back[BACK_CAP]; /* the server's bytes for the client */
    size_t back_len;
    enum rq_state state;
    struct http_body body;
    const struct icpt *ic;
    int status; /* a request refused: the answer, and the relay ends */
    char msg[512];
};

/* After a failed call: what to wait for, or the side's end. */
static bool note(struct side *s, int rc, bool reading)
{
    int e = SSL_get_error(s->ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        s->want |= e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return false;
    }
    ERR_clear_error();
    if (reading && e == SSL_ERROR_ZERO_RETURN)
        s->eof = true;
    else
        s->failed = true;
    return true;
}

static bool side_read(struct side *s, char *buf, size_t cap, size_t *len)
{
    size_t got;
    if (s->eof || s->failed || *len == cap)
        return false;
    int rc = SSL_read_ex(s->ssl, buf + *len, cap - *len, &got);
    if (rc == 1) {
        *len += got;
        return true;
    }
    return note(s, rc, true);
}

static bool side_write(struct side *s, char *buf, size_t *len)
{
    size_t w;
    if (*len == 0 || s->failed)
        return false;
    int rc = SSL_write_ex(s->ssl, buf, *len, &w);
    if (rc != 1)
        return note(s, rc, false);
    memmove(buf, buf + w, *len - w);
    *len -= w;
    return true;
}

static bool out_append(struct relay *r, const char *p, size_t n)
{
    if (r->out_len + n > r->out_cap) {
        size_t cap = (r->out_len + n) * 2;
        char *grown = realloc(r->out, cap);
        if (!grown)
            return false;
        r->out = grown;
        r->out_cap = cap;
    }
    memcpy(r->out + r->out_len, p, n);
    r->out_len += n;
    return true;
}

static void consume(struct relay *r, size_t n)
{
    memmove(r->in, r->in + n, r->in_len - n);
    r->in_len -= n;
}

static bool refuse(struct relay *r, int status, const char *method, const char *reason,
                   const char *msg)
{
    struct http_req shown = *r->ic->req;
    snprintf(shown.method, sizeof(shown.method), "%s", method);
    reply_log(r->ic->live->s.sandbox, false, &shown, r->ic->addr, reason);
    r->status = status;
    snprintf(r->msg, sizeof(r->msg), "%s", msg);
    return true;
}

/* The head at the front of `in`, rewritten into `out`. */
static bool send_head(struct relay *r, size_t head_len)
{
    const struct icpt *ic = r->ic;
    struct http_req q;
    const char *why;
    char msg[512], *head;
    size_t len;

    if (http_head_parse_inner(r->in, head_len, &q, &why) != 0) {
        snprintf(msg, sizeof(msg), "corral egress: bad request: %s", why);
        return refuse(r, 400, "-", "bad-request", msg);
    }
    if (transform_head(ic->set, ic->live->s.resolver, ic->host, r->in, head_len, &head, &len, msg,
                       sizeof(msg)) != 0)
        return refuse(r, 502, q.method, "placeholder", msg);
    bool ok = out_append(r, head, len);
    OPENSSL_cleanse(head, len);
    free(head);
    if (!ok)
        return refuse(r, 500, q.method, "out-of-memory", "corral egress: out of memory");
    transform_log(ic->live->s.sandbox, ic->host, q.method, ic->set);
    consume(r, head_len);
    http_body_start(&r->body, &q);
    r->state = q.upgrade ? RQ_RAW : http_body_done(&r->body) ? RQ_HEAD : RQ_BODY;
    return true;
}

/* A head waits until everything before it is sent: it may hold secrets and
 * nothing after it should be read before it is decided. */
static bool take_head(struct relay *r)
{
    size_t head_len;

    if (r->in_len == 0 || r->out_len > 0)
        return false;
    enum head_scan s = http_head_scan(r->in, r->in_len, &head_len);
    if (s == HEAD_BAD)
        return refuse(r, 400, "-", "bad-request", "corral egress: malformed request head");
    if (s == HEAD_PARTIAL)
        return r->in_len == IN_CAP &&
               refuse(r, 431, "-", "head-too-large", "corral egress: request head over 16 KiB");
    return send_head(r, head_len);
}

static bool take_body(struct relay *r)
{
    if (r->in_len == 0 || r->out_len >= OUT_HIGH)
        return false;
    long k = r->state == RQ_RAW ? (long)r->in_len : http_body_feed(&r->body, r->in, r->in_len);
    if (k < 0)
        return refuse(r, 400, "-", "bad-request", "corral egress: malformed chunked body");
    if (!out_append(r, r->in, (size_t)k))
        return refuse(r, 500, "-", "out-of-memory", "corral egress: out of memory");
    consume(r, (size_t)k);
    if (r->state == RQ_BODY && http_body_done(&r->body))
        r->state = RQ_HEAD;
    return k > 0;
}

/* The client is done sending and all of it went on: close_notify to the
 * server, which still answers what it got. */
static bool half_close(struct relay *r)
{
    if (!r->cli.eof || r->srv.shut || r->out_len > 0 || r->srv.failed)
        return false;
    int rc = SSL_shutdown(r->srv.ssl);
    if (rc < 0)
        return note(&r->srv, rc, false);
    r->srv.shut = true;
    shutdown(r->srv.fd, SHUT_WR);
    return true;
}

static bool finished(const struct relay *r)
{
    return r->status || r->cli.failed || r->srv.failed || (r->srv.eof && r->back_len == 0);
}

static void pump(struct relay *r)
{
    bool moved = true;

    while (moved && !finished(r)) {
        r->cli.want = r->srv.want = 0;
        moved = side_read(&r->cli, r->in, IN_CAP, &r->in_len);
        moved |= r->state == RQ_HEAD ? take_head(r) : take_body(r);
        moved |= side_write(&r->srv, r->out, &r->out_len);
        moved |= side_read(&r->srv, r->back, BACK_CAP, &r->back_len);
        moved |= side_write(&r->cli, r->back, &r->back_len);
        moved |= half_close(r);
    }
}

static void loop(struct relay *r)
{
    for (;;) {
        pump(r);
        if (finished(r))
            return;
        struct pollfd pfd[2] = {{.fd = r->cli.fd, .events = r->cli.want},
                                {.fd = r->srv.fd, .events = r->srv.want}};
        int n = poll(pfd, 2, IDLE_MS);
        if (n == 0 || (n < 0 && errno != EINTR))
            return;
    }
}

void tls_relay_run(SSL *cli, SSL *srv, const struct icpt *ic)
{
    struct relay *r = calloc(1, sizeof(*r));

    if (!r)
        return;
    r->cli = (struct side){.ssl = cli, .fd = ic->cli};
    r->srv = (struct side){.ssl = srv, .fd = ic->up};
    r->ic = ic;
    loop(r);
    int64_t deadline = io_now_ms() + ANSWER_MS;
    if (r->status && !r->cli.failed &&
        tls_write_all(cli, ic->cli, r->back, r->back_len, deadline) == 0)
        tls_reply_error(cli, ic->cli, r->status, r->msg, deadline);
    else if (r->srv.eof && !r->cli.failed)
        SSL_shutdown(cli);
    if (r->out)
        OPENSSL_cleanse(r->out, r->out_cap);
    free(r->out);
    OPENSSL_cleanse(r->in, sizeof(r->in));
    free(r);
}
