/*
 * HTTP/1.1 for envd. Requests are read into a per-connection buffer; the head
 * is copied out so the buffer can keep serving body bytes. Request bodies are
 * streamed (uploads of any size never sit whole in memory). Responses are
 * either sized or chunked; streams use chunked encoding, which every fetch
 * implementation accepts and which keeps the connection reusable. What a
 * head and a chunk-size line say is parsed in http_parse.c (pure).
 */
#include "http_status.h"
#include "http.h"
#include "http_parse.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* Fills the buffer with at least one more byte. 1 ok, 0 EOF, -1 error. */
static int conn_fill(struct http_conn *c)
{
    ssize_t n;

    if (c->off > 0 && c->off == c->len) {
        c->off = 0;
        c->len = 0;
    }
    if (c->len == sizeof(c->buf)) {
        if (c->off == 0)
            return -1; /* a head or line longer than the buffer */
        memmove(c->buf, c->buf + c->off, c->len - c->off);
        c->len -= c->off;
        c->off = 0;
    }
    do {
        n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if (n == 0)
        return 0;
    c->len += (size_t)n;
    return 1;
}

int http_read_request(struct http_conn *c, struct http_req *r, int idle_timeout_ms)
{
    size_t head_len;
    enum http_head_status st;

    memset(r, 0, offsetof(struct http_req, head));
    r->c = c;
    while ((head_len = http_head_length(c->buf + c->off, c->len - c->off)) == 0) {
        if (c->len == c->off) {
            struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
            if (poll(&pfd, 1, idle_timeout_ms) <= 0)
                return 0;
        }
        int rc = conn_fill(c);
        if (rc <= 0)
            return rc == 0 && c->len == c->off ? 0 : -1;
    }
    st = http_parse_head(r, c->buf + c->off, head_len);
    if (st == HTTP_HEAD_TOO_LONG)
        return -1;
    c->off += head_len;
    if (st != HTTP_HEAD_OK) {
        r->keep_alive = 0;
        http_send_error(r, 400, "malformed HTTP request");
        return -1;
    }
    const char *expect = http_header(r, "Expect");
    if (expect != NULL && strcasecmp(expect, "100-continue") == 0)
        http_send_all(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    return 1;
}

/* Copies up to n buffered-or-received bytes. */
static ssize_t conn_read_raw(struct http_conn *c, void *buf, size_t n)
{
    size_t avail;

    if (c->len == c->off) {
        int rc = conn_fill(c);
        if (rc <= 0)
            return -1; /* EOF inside a body is an error too */
    }
    avail = c->len - c->off;
    if (n > avail)
        n = avail;
    memcpy(buf, c->buf + c->off, n);
    c->off += n;
    return (ssize_t)n;
}

/* Reads one CRLF-terminated line (chunk sizes, trailers). */
static int conn_read_line(struct http_conn *c, char *line, size_t max)
{
    for (;;) {
        char *nl = c->len > c->off ? memchr(c->buf + c->off, '\n', c->len - c->off) : NULL;
        if (nl != NULL) {
            size_t l = (size_t)(nl - (c->buf + c->off));
            if (l >= max)
                return -1;
            memcpy(line, c->buf + c->off, l);
            line[l] = '\0';
            if (l > 0 && line[l - 1] == '\r')
                line[l - 1] = '\0';
            c->off += l + 1;
            return 0;
        }
        if (c->len - c->off >= max || conn_fill(c) <= 0)
            return -1;
    }
}

/* Moves to the next chunk; sets body_done after the last one and its trailers. */
static int next_chunk(struct http_req *r)
{
    char line[256];

    if (r->body_left == 0 && conn_read_line(r->c, line, sizeof(line)) < 0)
        return -1; /* the CRLF after the previous chunk's data */
    if (conn_read_line(r->c, line, sizeof(line)) < 0)
        return -1;
    long long size;
    if (http_chunk_size(line, &size) < 0)
        return -1;
    if (size == 0) {
        do {
            if (conn_read_line(r->c, line, sizeof(line)) < 0)
                return -1;
        } while (line[0] != '\0');
        r->body_done = 1;
    }
    r->body_left = size;
    return 0;
}

ssize_t http_body_read(struct http_req *r, void *buf, size_t n)
{
    ssize_t got;

    if (r->body_error)
        return -1;
    if (r->body_done)
        return 0;
    if (r->body_mode == BODY_CHUNKED && r->body_left <= 0) {
        if (next_chunk(r) < 0) {
            r->body_error = 1;
            return -1;
        }
        if (r->body_done)
            return 0;
    }
    if ((long long)n > r->body_left)
        n = (size_t)r->body_left;
    got = conn_read_raw(r->c, buf, n);
    if (got < 0) {
        r->body_error = 1;
        return -1;
    }
    r->body_left -= got;
    if (r->body_mode == BODY_LENGTH && r->body_left == 0)
        r->body_done = 1;
    return got;
}

int http_body_read_all(struct http_req *r, char **out, size_t *len, size_t max)
{
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);

    if (buf == NULL)
        return -1;
    for (;;) {
        if (used + 1 == cap) {
            char *nb;
            if (cap > max) {
                free(buf);
                return -2;
            }
            nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = http_body_read(r, buf + used, cap - used - 1);
        if (n < 0) {
            free(buf);
            return -1;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    if (used > max) {
        free(buf);
        return -2;
    }
    buf[used] = '\0';
    *out = buf;
    *len = used;
    return 0;
}

int http_body_drain(struct http_req *r, long long max)
{
    char tmp[8192];
    long long total = 0;

    while (!r->body_done) {
        ssize_t n = http_body_read(r, tmp, sizeof(tmp));
        if (n < 0)
            return -1;
        total += n;
        if (total > max)
            return -1;
    }
    return 0;
}

int http_send_all(int fd, const void *p, size_t n)
{
    const char *b = p;

    while (n > 0) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int http_send_head(struct http_req *r, int status, const char *content_type,
                   long long content_length, const char *extra)
{
    char head[2048];
    int n;

    n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n", status, http_status_text(status));
    if (content_type != NULL)
        n += snprintf(head + n, sizeof(head) - (size_t)n, "Content-Type: %s\r\n", content_type);
    if (status == 204 || status == 304)
        content_length = 0; /* no body, and no framing headers either */
    else if (content_length >= 0)
        n += snprintf(head + n, sizeof(head) - (size_t)n, "Content-Length: %lld\r\n",
                      content_length);
    else
        n += snprintf(head + n, sizeof(head) - (size_t)n, "Transfer-Encoding: chunked\r\n");
    n += snprintf(head + n, sizeof(head) - (size_t)n, "%s%s\r\n", extra ? extra : "",
                  r->keep_alive ? "" : "Connection: close\r\n");
    if ((size_t)n >= sizeof(head))
        return -1;
    r->head_sent = 1;
    r->chunked_resp = content_length < 0;
    return http_send_all(r->c->fd, head, (size_t)n);
}

int http_send_chunk(struct http_req *r, const void *p, size_t n)
{
    char size[32];
    int l;

    if (n == 0)
        return 0; /* a zero-size chunk would end the body */
    l = snprintf(size, sizeof(size), "%zx\r\n", n);
    if (http_send_all(r->c->fd, size, (size_t)l) < 0 || http_send_all(r->c->fd, p, n) < 0)
        return -1;
    return http_send_all(r->c->fd, "\r\n", 2);
}

int http_end_chunks(struct http_req *r)
{
    return http_send_all(r->c->fd, "0\r\n\r\n", 5);
}

int http_send_body(struct http_req *r, int status, const char *content_type, const char *body,
                   size_t n)
{
    if (http_send_head(r, status, content_type, (long long)n, NULL) < 0)
        return -1;
    return n > 0 ? http_send_all(r->c->fd, body, n) : 0;
}

int http_send_error(struct http_req *r, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    json_t *o;
    char *s;
    int rc;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    o = json_pack("{s:i,s:s}", "code", status, "message", msg);
    s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (s == NULL)
        return http_send_body(r, status, "application/json", "{}", 2);
    rc = http_send_body(r, status, "application/json", s, strlen(s));
    free(s);
    return rc;
}
