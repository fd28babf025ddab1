/* Unit tests of envd's HTTP/1.1 requests: the pure parser (envd/http_parse.c:
 * where a head ends, request lines, headers, the body's framing, keep-alive,
 * chunk sizes, query parameters), each refusal by table, and http.c's reading
 * over a socketpair (bodies by length and chunked, pipelined requests, the
 * 400 of a malformed head, no answer to an oversized one, 100-continue,
 * bodies cut short or too large). */
#include "check.h"
#include "http.h"
#include "http_parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void test_http(int *total_passed, int *total_failed);

CHECK_COUNTERS;

static struct http_req req; /* 32 KiB of head: not on the stack */

static enum http_head_status parse(const char *head)
{
    req.c = NULL;
    return http_parse_head(&req, head, strlen(head));
}

struct good {
    const char *head;
    const char *method, *path, *query;
    int keep_alive;
    enum http_body_mode mode;
    long long left;
};

static const struct good goods[] = {
    {"GET /files?path=%2Ftmp&x HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/files", "path=%2Ftmp&x", 1,
     BODY_NONE, 0},
    {"GET /a%20b+c HTTP/1.0\r\n\r\n", "GET", "/a b+c", "", 0, BODY_NONE, 0},
    {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", "GET", "/", "", 1, BODY_NONE, 0},
    {"GET / HTTP/1.1\r\nconnection: CLOSE\r\n\r\n", "GET", "/", "", 0, BODY_NONE, 0},
    {"POST /envs HTTP/1.1\r\nContent-Length: 5\r\n\r\n", "POST", "/envs", "", 1, BODY_LENGTH, 5},
    {"POST / HTTP/1.1\r\nContent-Length:\t 0 \r\n\r\n", "POST", "/", "", 1, BODY_LENGTH, 0},
    {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "POST", "/", "", 1, BODY_CHUNKED, -1},
    /* chunked wins over a length */
    {"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n", "POST",
     "/", "", 1, BODY_CHUNKED, -1},
    {"OPTIONS * HTTP/1.1\r\n\r\n", "OPTIONS", "*", "", 1, BODY_NONE, 0},
};

static void test_good_heads(void)
{
    for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
        const struct good *g = &goods[i];
        int ok = parse(g->head) == HTTP_HEAD_OK && strcmp(req.method, g->method) == 0 &&
                 strcmp(req.path, g->path) == 0 && strcmp(req.query, g->query) == 0 &&
                 req.keep_alive == g->keep_alive && req.body_mode == g->mode &&
                 (g->mode == BODY_NONE || req.body_left == g->left) &&
                 req.body_done == (g->mode == BODY_NONE || (g->mode == BODY_LENGTH && !g->left));
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  good head %zu\n", i);
    }
}

static const char *const malformed[] = {
    "\r\n\r\n",                                       /* no request line */
    "GET\r\n\r\n",                                    /* no target */
    "GET /\r\n\r\n",                                  /* no version */
    "GET / HTTP/2.0\r\n\r\n",                         /* not HTTP/1.x */
    "GET / http/1.1\r\n\r\n",                         /* case matters */
    "GET /%zz HTTP/1.1\r\n\r\n",                      /* a malformed escape */
    "GET /%2 HTTP/1.1\r\n\r\n",                       /* a cut escape */
    "GET / HTTP/1.1\r\nHost a\r\n\r\n",               /* a header without a colon */
    "GET / HTTP/1.1\r\nContent-Length: abc\r\n\r\n",  /* not a number */
    "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",   /* negative */
    "GET / HTTP/1.1\r\nContent-Length: 5x\r\n\r\n",   /* trailing junk */
    "GET / HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n",  /* two numbers */
    "GET / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", /* not decimal */
};

static void test_malformed_heads(void)
{
    for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
        int st = parse(malformed[i]);
        CHECK(st == HTTP_HEAD_MALFORMED);
        if (st != HTTP_HEAD_MALFORMED)
            fprintf(stderr, "  malformed head %zu parsed: %d\n", i, st);
    }
    CHECK(http_parse_head(&req, "GET", 3) == HTTP_HEAD_MALFORMED);
}

/* A NUL once ended the head where it stood: a Content-Length after it went
 * unseen, and its body was read as the next request (smuggling). */
static void test_nul_bytes(void)
{
    static const char after_crlf[] = "POST / HTTP/1.1\r\nHost: a\r\n\0Content-Length: 5\r\n\r\n";
    static const char in_value[] = "POST / HTTP/1.1\r\nHost: a\0b\r\nContent-Length: 5\r\n\r\n";
    static const char in_name[] = "POST / HTTP/1.1\r\nHo\0st: a\r\n\r\n";
    static const char in_line[] = "GET / HTTP/1.1\0x\r\n\r\n";
    static const char *const heads[] = {after_crlf, in_value, in_name, in_line};
    static const size_t lens[] = {sizeof(after_crlf) - 1, sizeof(in_value) - 1, sizeof(in_name) - 1,
                                  sizeof(in_line) - 1};

    for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
        enum http_head_status st;
        req.c = NULL;
        st = http_parse_head(&req, heads[i], lens[i]);
        CHECK(http_head_length(heads[i], lens[i]) == lens[i] && st == HTTP_HEAD_MALFORMED);
        if (st != HTTP_HEAD_MALFORMED)
            fprintf(stderr, "  head with a NUL %zu parsed: %d\n", i, st);
    }
}

/* A head of exactly len bytes: the request line, one header "X: vvv...",
 * the blank line. */
static char *head_of(size_t len)
{
    char *h = malloc(len + 1);

    snprintf(h, len + 1, "GET / HTTP/1.1\r\nX: ");
    memset(h + 19, 'v', len - 23);
    memcpy(h + len - 4, "\r\n\r\n", 5);
    return h;
}

static void test_limits(void)
{
    char *h = head_of(HTTP_HEAD_MAX), *big = head_of(HTTP_HEAD_MAX + 1), *many;
    size_t used;

    CHECK(strlen(h) == HTTP_HEAD_MAX && http_head_length(h, strlen(h)) == HTTP_HEAD_MAX);
    CHECK(parse(h) == HTTP_HEAD_OK && strlen(http_header(&req, "X")) == HTTP_HEAD_MAX - 23);
    CHECK(parse(big) == HTTP_HEAD_TOO_LONG);
    free(h);
    free(big);
    /* HTTP_MAX_HEADERS headers, and one more */
    many = malloc(64 + (HTTP_MAX_HEADERS + 1) * 8);
    used = (size_t)sprintf(many, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < HTTP_MAX_HEADERS; i++)
        used += (size_t)sprintf(many + used, "H%02d: v\r\n", i);
    snprintf(many + used, 3, "\r\n");
    CHECK(parse(many) == HTTP_HEAD_OK && req.nhdrs == HTTP_MAX_HEADERS);
    sprintf(many + used, "H64: v\r\n\r\n");
    CHECK(parse(many) == HTTP_HEAD_MALFORMED);
    free(many);
}

static void test_head_length(void)
{
    const char *r = "GET / HTTP/1.1\r\nHost: a\r\n\r\nBODY";

    CHECK(http_head_length(r, strlen(r)) == strlen(r) - 4);
    CHECK(http_head_length(r, strlen(r) - 5) == 0); /* blank line not all there */
    CHECK(http_head_length("\r\n\r\n", 4) == 4 && http_head_length("\r\n\r", 3) == 0);
    CHECK(http_head_length("", 0) == 0);
}

static void test_headers(void)
{
    CHECK(parse("GET / HTTP/1.1\r\nX-A: \t v w \t\r\nx-b:\r\nX-A: second\r\n\r\n") == HTTP_HEAD_OK);
    CHECK(req.nhdrs == 3 && strcmp(http_header(&req, "x-a"), "v w") == 0); /* the first counts */
    CHECK(strcmp(http_header(&req, "X-B"), "") == 0 && http_header(&req, "X-C") == NULL);
}

static int chunk(const char *line, long long want)
{
    long long size = -7;
    int rc = http_chunk_size(line, &size);

    return want < 0 ? rc == -1 && size == -7 : rc == 0 && size == want;
}

static void test_chunk_sizes(void)
{
    CHECK(chunk("0", 0) && chunk("1a", 26) && chunk("1A;name=value", 26) && chunk("ffff", 65535));
    CHECK(chunk("", -1) && chunk("x", -1) && chunk(";ext", -1) && chunk("-5", -1));
}

static int param(const char *query, const char *name, const char *want)
{
    char out[8] = "unset";
    int rc;

    req.query = query;
    rc = http_query_param(&req, name, out, sizeof(out));
    if (want == NULL)
        return rc == 0;
    if (strcmp(want, "TOO LONG") == 0)
        return rc == -1;
    return rc == 1 && strcmp(out, want) == 0;
}

static void test_query_params(void)
{
    const char *q = "path=%2Ftmp&x&y=&ab=2&u=a+b&bad=%zz&long=12345678";

    CHECK(param(q, "path", "/tmp") && param(q, "x", "") && param(q, "y", ""));
    CHECK(param(q, "ab", "2") && param(q, "a", NULL) && param(q, "u", "a b"));
    CHECK(param(q, "bad", "TOO LONG") && param(q, "long", "TOO LONG") && param(q, "z", NULL));
    CHECK(param("", "a", NULL) && param("a=1&a=2", "a", "1"));
}

/* --- over a socketpair ------------------------------------------------- */

static struct http_conn conn;

/* A connection whose peer has sent text (and, if close_after, closed its
 * side). The peer's fd, or -1. */
static int connect_with(const char *text, size_t n, int close_after)
{
    int sv[2];

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return -1;
    memset(&conn, 0, sizeof(conn));
    conn.fd = sv[0];
    if (http_send_all(sv[1], text, n) != 0)
        return -1;
    if (close_after)
        shutdown(sv[1], SHUT_WR);
    return sv[1];
}

static void hang_up(int peer)
{
    close(conn.fd);
    close(peer);
}

/* What the server side sent so far, NUL-terminated into out. */
static size_t answer(int peer, char *out, size_t max)
{
    ssize_t n = recv(peer, out, max - 1, MSG_DONTWAIT);

    out[n > 0 ? n : 0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

static void test_length_bodies(void)
{
    const char *in = "POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
                     "GET /b?q=1 HTTP/1.1\r\n\r\n";
    int peer = connect_with(in, strlen(in), 1);
    char *body = NULL;
    size_t len = 0;

    CHECK(http_read_request(&conn, &req, 1000) == 1 && strcmp(req.path, "/a") == 0);
    CHECK(http_body_read_all(&req, &body, &len, 100) == 0 && len == 5 &&
          strcmp(body, "hello") == 0 && req.body_done);
    free(body);
    CHECK(http_read_request(&conn, &req, 1000) == 1 && strcmp(req.path, "/b") == 0 &&
          strcmp(req.query, "q=1") == 0);
    CHECK(http_read_request(&conn, &req, 1000) == 0); /* the peer closed, nothing pending */
    hang_up(peer);

    in = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789";
    peer = connect_with(in, strlen(in), 1);
    CHECK(http_read_request(&conn, &req, 1000) == 1 &&
          http_body_read_all(&req, &body, &len, 4) == -2);
    hang_up(peer);

    in = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"; /* cut short */
    peer = connect_with(in, strlen(in), 1);
    CHECK(http_read_request(&conn, &req, 1000) == 1 &&
          http_body_read_all(&req, &body, &len, 100) == -1);
    hang_up(peer);
}

static void test_chunked_bodies(void)
{
    const char *in = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: t\r\n\r\n"
                     "GET /next HTTP/1.1\r\n\r\n";
    int peer = connect_with(in, strlen(in), 1);
    char *body = NULL;
    size_t len = 0;

    CHECK(http_read_request(&conn, &req, 1000) == 1 && req.body_mode == BODY_CHUNKED);
    CHECK(http_body_read_all(&req, &body, &len, 100) == 0 && len == 11 &&
          strcmp(body, "hello world") == 0);
    free(body);
    CHECK(http_read_request(&conn, &req, 1000) == 1 && strcmp(req.path, "/next") == 0);
    hang_up(peer);

    in = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n";
    peer = connect_with(in, strlen(in), 1);
    CHECK(http_read_request(&conn, &req, 1000) == 1 &&
          http_body_read_all(&req, &body, &len, 100) == -1 && req.body_error);
    CHECK(http_body_drain(&req, 100) == -1); /* the connection must close */
    hang_up(peer);

    in = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"; /* cut short */
    peer = connect_with(in, strlen(in), 1);
    CHECK(http_read_request(&conn, &req, 1000) == 1 &&
          http_body_read_all(&req, &body, &len, 100) == -1);
    hang_up(peer);
}

static void test_read_refusals(void)
{
    const char *in = "GET / HTTP/9\r\n\r\n";
    char out[512], *big;
    int peer = connect_with(in, strlen(in), 0);

    CHECK(http_read_request(&conn, &req, 1000) == -1);
    answer(peer, out, sizeof(out));
    CHECK(strncmp(out, "HTTP/1.1 400 ", 13) == 0 && strstr(out, "Connection: close\r\n") &&
          strstr(out, "\"malformed HTTP request\""));
    hang_up(peer);

    /* over HTTP_HEAD_MAX: closed without an answer */
    big = head_of(HTTP_HEAD_MAX + 1);
    peer = connect_with(big, strlen(big), 0);
    CHECK(http_read_request(&conn, &req, 1000) == -1 && answer(peer, out, sizeof(out)) == 0);
    hang_up(peer);
    free(big);

    /* a head cut short by the peer's close; nothing at all is a clean end */
    in = "GET / HTTP/1.1\r\nHost: a\r\n";
    peer = connect_with(in, strlen(in), 1);
    CHECK(http_read_request(&conn, &req, 1000) == -1);
    hang_up(peer);
    peer = connect_with("", 0, 1);
    CHECK(http_read_request(&conn, &req, 1000) == 0);
    hang_up(peer);

    in = "PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok";
    peer = connect_with(in, strlen(in), 1);
    CHECK(http_read_request(&conn, &req, 1000) == 1 && answer(peer, out, sizeof(out)) == 25 &&
          strcmp(out, "HTTP/1.1 100 Continue\r\n\r\n") == 0);
    hang_up(peer);
}

void test_http(int *total_passed, int *total_failed)
{
    test_good_heads();
    test_malformed_heads();
    test_nul_bytes();
    test_limits();
    test_head_length();
    test_headers();
    test_chunk_sizes();
    test_query_params();
    test_length_bodies();
    test_chunked_bodies();
    test_read_refusals();
    *total_passed += passed;
    *total_failed += failed;
}
