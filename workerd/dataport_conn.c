/* dataport_conn.c: one gateway connection, request after request.
 *
 * Each request's head is read and parsed, its signature checked (per
 * request: a kept connection carries requests for many sandboxes), its body's
 * end found from its head (dataport_head_body), and the sandbox's response
 * parsed just enough to find its end (dataport_frame.c). Exactly the
 * request's bytes go to the sandbox and exactly the response's bytes come
 * back; then the sandbox connection goes to the pool and the gateway's waits
 * for its next request. Anything that leaves a message's end in doubt ends
 * both connections instead. After a 101 the connection is a tunnel to that
 * one sandbox port until both sides end.
 *
 * conn_progress is called on every event and does all it can without
 * blocking; the state says what it is waiting for. */
#include "dataport_loop.h"

#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { WAIT, AGAIN, GONE, YIELD }; /* YIELD: more to do, after the others' turn */

static void conn_free(struct dp_conn *c)
{
    struct dp_loop *l = c->loop;

    if (c->up)
        up_close(c->loop, c->up);
    dp_loop_unready(l, c);
    if (c->prev)
        c->prev->next = c->next;
    else
        l->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    l->nconns--;
    free(c->in);
    free(c->rh);
    free(c->fwd);
    buf_free(&c->to_up);
    buf_free(&c->to_client);
    dp_loop_bury(l, &c->ep);
}

struct dp_conn *conn_new(struct dp_loop *l, int fd)
{
    struct dp_conn *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->ep.kind = DP_CLIENT;
    c->ep.fd = fd;
    c->loop = l;
    c->state = ST_HEAD;
    c->deadline = l->now + DATAPORT_HEAD_TIMEOUT;
    if (dp_loop_watch(l, &c->ep) != 0) {
        free(c);
        return NULL;
    }
    c->next = l->conns;
    if (l->conns)
        l->conns->prev = c;
    l->conns = c;
    l->nconns++;
    return c;
}

/* Ends the exchange with an answer of the data port's own, then "close". */
static int answer(struct dp_conn *c, char *resp, size_t n)
{
    if (c->up) {
        up_close(c->loop, c->up);
        c->up = NULL;
    }
    buf_free(&c->to_client);
    if (!resp || buf_append(&c->to_client, resp, n) != 0) {
        free(resp);
        return GONE;
    }
    free(resp);
    c->state = ST_LINGER;
    c->deadline = c->loop->now + DATAPORT_LINGER_TIMEOUT;
    return AGAIN;
}

static int refuse(struct dp_conn *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(struct dp_conn *c, int code, const char *fmt, ...)
{
    char msg[256], *out;
    size_t n = 0;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    out = dataport_error_response(code, msg, &n); /* before answer() reads n */
    return answer(c, out, n);
}

/* A sandbox port that cannot be reached, for whatever reason: one answer, so
 * a port the data port may not connect to reads as one nothing listens on. */
static int unreachable(struct dp_conn *c, const char *why)
{
    return refuse(c, 502, "sandbox port %s is not reachable (%s)", c->h.port, why);
}

/* For the accept path, at the connection limit: one try, no waiting. */
void conn_refuse(int fd, int code, const char *msg)
{
    size_t n = 0;
    char *out = dataport_error_response(code, msg, &n);

    if (out)
        (void)!send(fd, out, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    free(out);
    close(fd);
}

/* dataport_signature_check under this worker's current and previous keys. */
static int check_signature(struct dp_conn *c, const char **why)
{
    const struct dataport_hooks *k = &c->loop->hooks;
    char key[512], previous[512];
    int rc;

    if (k->worker_key(k->ud, key, sizeof(key)) != 0)
        key[0] = '\0';
    if (!k->previous_key || k->previous_key(k->ud, previous, sizeof(previous)) != 0)
        previous[0] = '\0';
    rc = dataport_signature_check(&c->h, key, previous, (long long)time(NULL), why);
    explicit_bzero(key, sizeof(key));
    explicit_bzero(previous, sizeof(previous));
    return rc;
}

/* Reads into c->in; GONE on EOF or error, WAIT when nothing is there. */
static int read_in(struct dp_conn *c)
{
    ssize_t r;

    if (c->in_len == c->in_cap) {
        size_t cap = c->in_cap ? c->in_cap * 2 : 8192;
        char *p = realloc(c->in, cap);
        if (!p)
            return GONE;
        c->in = p;
        c->in_cap = cap;
    }
    r = io_recv(&c->ep, c->in + c->in_len, c->in_cap - c->in_len);
    if (r == -1)
        return WAIT;
    if (r <= 0)
        return GONE;
    if (c->in_len == 0)
        c->deadline = c->loop->now + DATAPORT_HEAD_TIMEOUT;
    c->in_len += (size_t)r;
    return AGAIN;
}

static int start_upstream(struct dp_conn *c);

/* A volume request leaves the loop (its file I/O blocks): the connection goes
 * to the volume hook, which answers it on a thread and closes it. */
static int hand_off(struct dp_conn *c)
{
    const struct dataport_hooks *k = &c->loop->hooks;
    int fd = c->ep.fd;

    if (!k->volume)
        return refuse(c, 404, "this worker serves no volume files");
    if (epoll_ctl(c->loop->ep, EPOLL_CTL_DEL, fd, NULL) != 0)
        return GONE;
    c->ep.fd = -1; /* conn_free closes nothing: the fd is the hook's */
    k->volume(k->ud, fd, &c->h, c->in, c->in_len);
    return GONE;
}

/* A complete head of hl bytes is in c->in: check it, then find the sandbox. */
static int take_head(struct dp_conn *c, size_t hl)
{
    const struct dataport_hooks *k = &c->loop->hooks;
    const char *why = NULL;
    int rc;

    memset(&c->h, 0, sizeof(c->h));
    c->h.buf = c->in;
    c->h.len = hl;
    if (dataport_head_parse(&c->h) != 0)
        return refuse(c, 400, "malformed request head");
    if (dataport_head_body(&c->h, &c->req, &why) != 0)
        return refuse(c, 400, "%s", why);
    if ((rc = check_signature(c, &why)) != 0) {
        log_sandbox("warn", dataport_valid_id(c->h.sandbox) ? c->h.sandbox : NULL, NULL,
                    "dataport: refused a request: %s", why);
        return refuse(c, rc == -2 ? 503 : 403, "%s", why);
    }
    if (c->h.n_volume)
        return hand_off(c);
    if (k->resolve_cached && k->resolve_cached(k->ud, c->h.sandbox, c->ip, sizeof(c->ip)) == 0)
        return start_upstream(c);
    if (dp_loop_resolve(c->loop, c) != 0)
        return refuse(c, 503, "worker data port busy; retry shortly");
    c->state = ST_RESOLVE;
    return WAIT;
}

static int step_head(struct dp_conn *c)
{
    for (;;) {
        const char *end = dataport_head_end(c->in, c->in_len, &c->in_seen);
        int rc;

        if (end)
            return take_head(c, (size_t)(end + 4 - c->in));
        if (c->in_len >= DATAPORT_HEAD_MAX)
            return refuse(c, 431, "request head over %zu bytes", DATAPORT_HEAD_MAX);
        if (!c->ep.can_read)
            return WAIT;
        if ((rc = read_in(c)) != AGAIN)
            return rc;
    }
}

void conn_resolved(struct dp_conn *c, int rc, const char *ip)
{
    int r;

    if (rc != 0) {
        size_t n = 0;
        char *out = dataport_not_found_response(c->h.sandbox, &n);
        r = answer(c, out, n);
    } else {
        snprintf(c->ip, sizeof(c->ip), "%s", ip);
        r = start_upstream(c);
    }
    if (r != GONE)
        conn_progress(c);
    else
        conn_free(c);
}

/* The forwarded head, then the body bytes that came with the head; what
 * follows the body stays in c->in for the next request. */
static int queue_request(struct dp_conn *c)
{
    char *fwd = malloc(c->h.len + DATAPORT_FORWARD_EXTRA);
    size_t hl = c->h.len, n;
    long long body;
    int rc;

    if (!fwd)
        return GONE;
    n = dataport_head_forward(&c->h, fwd);
    rc = buf_append(&c->to_up, fwd, n);
    if (c->up->reused && c->req.kind == DP_BODY_NONE) {
        c->fwd = fwd;
        c->fwd_len = n;
    } else {
        free(fwd);
    }
    body = dataport_body_feed(&c->req, c->in + hl, c->in_len - hl);
    if (rc != 0 || body < 0)
        return GONE;
    if (buf_append(&c->to_up, c->in + hl, (size_t)body) != 0)
        return GONE;
    hl += (size_t)body;
    memmove(c->in, c->in + hl, c->in_len - hl);
    c->in_len -= hl;
    c->h.buf = NULL; /* it pointed into c->in; the values are copies */
    c->h.len = 0;
    return AGAIN;
}

/* A new connection to the sandbox's port (key: see struct dp_up). */
static int open_up(struct dp_conn *c, const char *key)
{
    struct dp_up *u;
    int fd = io_connect(c->ip, c->h.port, c->loop->hooks.from_sandbox_addr);

    if (fd < 0)
        return unreachable(c, strerror(errno));
    u = calloc(1, sizeof(*u));
    if (!u) {
        close(fd);
        return GONE;
    }
    u->ep.kind = DP_UP;
    u->ep.fd = fd;
    snprintf(u->key, sizeof(u->key), "%s", key);
    if (dp_loop_watch(c->loop, &u->ep) != 0) {
        up_close(c->loop, u);
        return GONE;
    }
    u->conn = c;
    c->up = u;
    c->state = ST_CONNECT;
    c->deadline = c->loop->now + DATAPORT_CONNECT_TIMEOUT;
    return AGAIN;
}

/* Whether the hooks let this request's port be connected to at all. */
static int port_allowed(const struct dp_conn *c)
{
    const struct dataport_hooks *k = &c->loop->hooks;

    return !k->port_allowed || k->port_allowed(k->ud, c->h.sandbox, (unsigned)atoi(c->h.port));
}

static int start_upstream(struct dp_conn *c)
{
    char key[DATAPORT_UPKEY_MAX];
    struct dp_up *u;
    int rc;

    if (!port_allowed(c))
        return unreachable(c, strerror(ECONNREFUSED));
    snprintf(key, sizeof(key), "%s:%s@%s", c->h.sandbox, c->h.port, c->ip);
    u = pool_take(c->loop, key);
    if (u) {
        u->conn = c;
        c->up = u;
        c->state = ST_RELAY;
        c->deadline = c->loop->now + DATAPORT_RELAY_TIMEOUT;
    } else if ((rc = open_up(c, key)) != AGAIN || !c->up) {
        return rc; /* refused (ST_LINGER), or out of memory */
    }
    return queue_request(c);
}

/* A kept connection the sandbox closed before answering (its idle timeout
 * crossed our reuse): a bodiless request goes again on a new one. */
static int retry_fresh(struct dp_conn *c)
{
    char key[DATAPORT_UPKEY_MAX], *fwd = c->fwd;
    size_t n = c->fwd_len;
    int rc;

    snprintf(key, sizeof(key), "%s", c->up->key);
    c->fwd = NULL;
    up_close(c->loop, c->up);
    c->up = NULL;
    c->up_eof = 0;
    buf_free(&c->to_up);
    rc = open_up(c, key);
    if (rc == AGAIN && c->up && buf_append(&c->to_up, fwd, n) != 0)
        rc = GONE;
    free(fwd);
    return rc;
}

static int step_connect(struct dp_conn *c)
{
    int err = 0;
    socklen_t len = sizeof(err);

    if (!c->up->ep.can_write)
        return WAIT;
    if (getsockopt(c->up->ep.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err != 0)
        return unreachable(c, strerror(err));
    c->state = ST_RELAY;
    c->deadline = c->loop->now + DATAPORT_RELAY_TIMEOUT;
    return AGAIN;
}

/* Request body bytes from the gateway to the sandbox, never past its end. */
static int pump_request(struct dp_conn *c)
{
    struct dp_loop *l = c->loop;
    size_t want = DATAPORT_SCRATCH;
    long long body;
    ssize_t r;

    if (c->req.done || c->to_up.len > 0 || !c->ep.can_read)
        return WAIT;
    if (c->req.kind == DP_BODY_LENGTH && c->req.left < want)
        want = (size_t)c->req.left; /* the next request's bytes stay in the socket */
    r = io_recv(&c->ep, l->scratch, want);
    if (r == -1)
        return WAIT;
    if (r <= 0)
        return GONE; /* the gateway gave up mid-body */
    body = dataport_body_feed(&c->req, l->scratch, (size_t)r);
    if (body < 0)
        return GONE;
    if (send_or_keep(&c->to_up, &c->up->ep, l->scratch, (size_t)body) != 0)
        return GONE;
    if ((size_t)body < (size_t)r) { /* after a chunked body: the next request's bytes */
        size_t extra = (size_t)r - (size_t)body;
        char *p = realloc(c->in, c->in_len + extra);
        if (!p)
            return GONE;
        memcpy(p + c->in_len, l->scratch + body, extra);
        c->in = p;
        c->in_len += extra;
        c->in_cap = c->in_len;
    }
    return AGAIN;
}

static int gather_head(struct dp_conn *c, const char *p, size_t n);

/* An interim response is dropped, and the final one read after it; a few at
 * most. */
static int skip_interim(struct dp_conn *c, size_t hl)
{
    size_t rest = c->rh_len - hl;
    char *tail;

    if (++c->interim > 8)
        return refuse(c, 502, "the sandbox sent too many interim responses");
    tail = malloc(rest ? rest : 1);
    if (!tail)
        return GONE;
    memcpy(tail, c->rh + hl, rest);
    free(c->rh);
    c->rh = NULL;
    c->rh_len = c->rh_cap = c->rh_seen = 0;
    if (rest == 0) {
        free(tail);
        return AGAIN;
    }
    int rc = gather_head(c, tail, rest);
    free(tail);
    return rc;
}

/* The sandbox's response head as the gateway gets it (dataport_resp_forward). */
static int forward_response_head(struct dp_conn *c, size_t hl)
{
    char *out = malloc(hl + DATAPORT_KEEP_EXTRA);
    size_t n;
    int rc;

    if (!out)
        return -1;
    n = dataport_resp_forward(c->rh, hl, c->keep ? c->h.gateway : NULL, out);
    rc = buf_append(&c->to_client, out, n);
    free(out);
    return rc;
}

/* The response head is complete in c->rh (hl bytes): check it and choose. */
static int take_response_head(struct dp_conn *c, size_t hl)
{
    struct dataport_resp r;
    const char *why = NULL;
    size_t rest = c->rh_len - hl;
    long long body;

    if (dataport_resp_parse(c->rh, hl, &r, &why) != 0) {
        log_sandbox("warn", c->h.sandbox[0] ? c->h.sandbox : NULL, NULL,
                    "dataport: sandbox answered %s", why);
        return refuse(c, 502, "the sandbox sent a malformed response: %s", why);
    }
    if (r.status == 101 && c->h.upgrade) {
        /* what the client sent after its head belongs to the tunnel too */
        if (forward_response_head(c, hl) != 0 ||
            buf_append(&c->to_client, c->rh + hl, c->rh_len - hl) != 0 ||
            buf_append(&c->to_up, c->in, c->in_len) != 0)
            return GONE;
        c->in_len = 0;
        c->state = ST_TUNNEL;
        c->resp_head = 1;
        return AGAIN;
    }
    if (r.status < 200) /* 100, 102, 103: nginx would take one for the answer */
        return skip_interim(c, hl);
    /* a bodiless answer claiming a body: its claimed bytes would follow its end */
    c->resp_keep = r.keep && !dataport_resp_false_body(&r, c->h.head_method);
    dataport_resp_body(&r, c->h.head_method, &c->resp);
    body = dataport_body_feed(&c->resp, c->rh + hl, rest);
    if (body < 0)
        return refuse(c, 502, "the sandbox sent a malformed chunked body");
    c->up_dirty |= (size_t)body < rest;
    /* kept only if both messages' ends are known now, and the gateway told so */
    c->keep =
        c->req.done && c->resp.kind != DP_BODY_CLOSE && r.keep && !c->h.close && !c->h.upgrade;
    if (forward_response_head(c, hl) != 0 ||
        buf_append(&c->to_client, c->rh + hl, (size_t)body) != 0)
        return GONE;
    c->resp_head = 1;
    free(c->rh);
    c->rh = NULL;
    c->rh_len = c->rh_cap = c->rh_seen = 0;
    return AGAIN;
}

/* Response bytes from the sandbox before its head is complete. */
static int gather_head(struct dp_conn *c, const char *p, size_t n)
{
    const char *end;

    free(c->fwd); /* answered: no retry now */
    c->fwd = NULL;
    if (c->rh_len + n > c->rh_cap) { /* doubled: a head dripped in costs no copy per byte */
        size_t cap = c->rh_cap * 2 > c->rh_len + n ? c->rh_cap * 2 : c->rh_len + n;
        char *q = realloc(c->rh, cap);
        if (!q)
            return GONE;
        c->rh = q;
        c->rh_cap = cap;
    }
    memcpy(c->rh + c->rh_len, p, n); /* the head, and the body bytes read with it */
    c->rh_len += n;
    end = dataport_head_end(c->rh, c->rh_len, &c->rh_seen);
    if (end && (size_t)(end - c->rh) <= DATAPORT_HEAD_MAX)
        return take_response_head(c, (size_t)(end + 4 - c->rh));
    if (end || c->rh_len > DATAPORT_HEAD_MAX)
        return refuse(c, 502, "the sandbox's response head is over %zu bytes", DATAPORT_HEAD_MAX);
    return AGAIN;
}

/* The sandbox ended its side: a response delimited by the close ends here. */
static int response_eof(struct dp_conn *c)
{
    if (c->fwd && !c->resp_head && c->rh_len == 0)
        return retry_fresh(c);
    c->up_eof = 1;
    if (c->resp_head && c->resp.kind == DP_BODY_CLOSE) {
        c->resp.done = 1;
        return AGAIN;
    }
    if (!c->resp_head && c->rh_len == 0 && c->to_client.len == 0)
        return refuse(c, 502, "the sandbox closed the connection without answering");
    return GONE; /* cut short: the gateway sees a truncated response */
}

/* Response bytes from the sandbox to the gateway, never past its end. */
static int pump_response(struct dp_conn *c)
{
    struct dp_loop *l = c->loop;
    long long body;
    ssize_t r;

    if (c->resp.done || c->to_client.len > 0 || !c->up->ep.can_read)
        return WAIT;
    r = io_recv(&c->up->ep, l->scratch, DATAPORT_SCRATCH);
    if (r == -1)
        return WAIT;
    if (r == 0 || r == -2)
        return response_eof(c);
    if (!c->resp_head)
        return gather_head(c, l->scratch, (size_t)r);
    body = dataport_body_feed(&c->resp, l->scratch, (size_t)r);
    if (body < 0)
        return GONE;
    c->up_dirty |= body < r;
    return send_or_keep(&c->to_client, &c->ep, l->scratch, (size_t)body) == 0 ? AGAIN : GONE;
}

/* Both messages are through: keep what can be kept. */
static int finish(struct dp_conn *c)
{
    /* the gateway's side as its answer said (c->keep); the sandbox's also
     * needs that it sent nothing more and keeps its side */
    int keep = c->keep;
    int keep_up = c->resp_keep && c->req.done && c->resp.kind != DP_BODY_CLOSE &&
                  c->to_up.len == 0 && !c->up_dirty && !c->up_eof;

    free(c->fwd);
    c->fwd = NULL;
    if (keep_up)
        pool_put(c->loop, c->up); /* which closes it instead if bytes came after the end */
    else
        up_close(c->loop, c->up);
    c->up = NULL;
    if (!c->req.done || !keep) {
        c->state = ST_LINGER;
        c->deadline = c->loop->now + DATAPORT_LINGER_TIMEOUT;
        return AGAIN;
    }
    free(c->rh);
    c->rh = NULL;
    c->rh_cap = c->rh_seen = 0;
    c->rh_len = c->resp_head = c->resp_keep = c->up_dirty = c->interim = c->keep = 0;
    c->up_eof = c->up_shut = 0;
    memset(&c->resp, 0, sizeof(c->resp)); /* set again from the next response's head */
    c->state = ST_HEAD;
    c->deadline = c->loop->now + (c->in_len ? DATAPORT_HEAD_TIMEOUT : DATAPORT_IDLE_TIMEOUT);
    if (c->in_len == 0) { /* an idle kept connection holds no buffer */
        free(c->in);
        c->in = NULL;
        c->in_cap = 0;
    }
    return AGAIN;
}

/* Up to a budget of passes, so that one fast transfer does not hold the
 * loop: YIELD when the budget ran out with bytes still moving. */
static int step_relay(struct dp_conn *c)
{
    /* The gateway closed its side with the request sent and the answer not
     * yet through: it gave up (nginx and the tunnel's bridge never half-close
     * a request). Closing the sandbox's side tells its server, which may stop
     * the work: the code interpreter interrupts the cell. */
    if (c->req.done && !c->resp.done && c->ep.hup)
        return GONE;
    for (int pass = 0; pass < 16; pass++) {
        int rc, any;

        if (buf_flush(&c->to_up, &c->up->ep) < 0) {
            if (c->fwd && !c->resp_head && c->rh_len == 0)
                return retry_fresh(c);
            return c->resp_head ? GONE : refuse(c, 502, "the sandbox closed the connection");
        }
        if (buf_flush(&c->to_client, &c->ep) < 0)
            return GONE;
        if ((rc = pump_request(c)) == GONE)
            return GONE;
        any = rc == AGAIN;
        if ((rc = pump_response(c)) != WAIT) {
            if (rc == GONE || c->state != ST_RELAY)
                return rc;
            any = 1;
        }
        if (c->resp.done && c->resp_head && c->to_client.len == 0)
            return finish(c);
        if (!any)
            return WAIT;
        c->deadline = c->loop->now + DATAPORT_RELAY_TIMEOUT;
    }
    return YIELD;
}

/* One direction of a tunnel; 1 when it moved bytes, -1 on an error. */
static int tunnel_dir(struct dp_loop *l, struct dp_ep *from, struct dp_ep *to, struct dp_buf *b,
                      int *eof, int *shut)
{
    int moved = 0;
    ssize_t r;

    if (buf_flush(b, to) < 0)
        return -1;
    if (!*eof && b->len == 0 && from->can_read) {
        r = io_recv(from, l->scratch, DATAPORT_SCRATCH);
        if (r == -2 || (r > 0 && send_or_keep(b, to, l->scratch, (size_t)r) != 0))
            return -1;
        *eof = r == 0;
        moved = r >= 0;
    }
    if (*eof && b->len == 0 && !*shut) {
        shutdown(to->fd, SHUT_WR);
        *shut = 1;
    }
    return moved;
}

static int step_tunnel(struct dp_conn *c)
{
    for (int pass = 0; pass < 16; pass++) {
        int a = tunnel_dir(c->loop, &c->ep, &c->up->ep, &c->to_up, &c->client_eof, &c->up_shut);
        int b = tunnel_dir(c->loop, &c->up->ep, &c->ep, &c->to_client, &c->up_eof, &c->client_shut);

        if (a < 0 || b < 0 || (c->up_shut && c->client_shut))
            return GONE;
        if (!a && !b)
            return WAIT;
        c->deadline = c->loop->now + DATAPORT_RELAY_TIMEOUT;
    }
    return YIELD;
}

/* The answer out, then "close": what the gateway still sends is read and
 * dropped for a moment, so that closing does not reset the connection before
 * it has read the answer. */
static int step_linger(struct dp_conn *c)
{
    int rc = buf_flush(&c->to_client, &c->ep);
    char sink[16384];
    ssize_t r;

    if (rc != 0)
        return rc < 0 ? GONE : WAIT;
    if (!c->client_shut) {
        shutdown(c->ep.fd, SHUT_WR);
        c->client_shut = 1;
    }
    while ((r = io_recv(&c->ep, sink, sizeof(sink))) > 0)
        ;
    return r == -1 ? WAIT : GONE;
}

void conn_progress(struct dp_conn *c)
{
    int rc = AGAIN;

    while (rc == AGAIN) {
        switch (c->state) {
        case ST_HEAD:
            rc = step_head(c);
            break;
        case ST_CONNECT:
            rc = step_connect(c);
            break;
        case ST_RELAY:
            rc = step_relay(c);
            break;
        case ST_TUNNEL:
            rc = step_tunnel(c);
            break;
        case ST_LINGER:
            rc = step_linger(c);
            break;
        default:
            rc = WAIT; /* ST_RESOLVE: conn_resolved goes on */
        }
    }
    if (rc == GONE)
        conn_free(c);
    else if (rc == YIELD)
        dp_loop_ready(c->loop, c);
}

void conn_timeout(struct dp_conn *c)
{
    if (c->state == ST_RESOLVE || c->deadline > c->loop->now)
        return;
    if (c->state == ST_CONNECT) {
        if (unreachable(c, "timed out") == AGAIN) {
            conn_progress(c);
            return;
        }
    }
    conn_free(c);
}
