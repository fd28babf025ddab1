/* Unit tests of workerd/dataport_frame.c and dataport_head_body: where a
 * request's and a sandbox response's bodies end on a kept connection, fed
 * whole and in pieces of every size; what a response head must not be; the
 * head the gateway gets. A wrong answer here lets bytes of one exchange be
 * read as the next one's, which may be another sandbox's. */
#include "check.h"
#include "dataport_frame.h"
#include "dataport_head.h"

#include <stdio.h>
#include <string.h>

void unit_dataport_frame(int *total_passed, int *total_failed);

static int passed, failed;

/* Feeds text to b in pieces of `step` bytes; how many bytes belong to the
 * body (-1 malformed), and whether it ended. */
static long long feed(struct dataport_body *b, const char *text, size_t step)
{
    size_t n = strlen(text), at = 0;
    long long used = 0;

    while (at < n && !b->done) {
        size_t take = n - at < step ? n - at : step;
        long long r = dataport_body_feed(b, text + at, take);
        if (r < 0)
            return -1;
        used += r;
        at += (size_t)r;
        if ((size_t)r < take)
            break; /* the body ended inside this piece */
    }
    return used;
}

/* A chunked body in pieces of 1, 2, 3, 7 and all: ends after `want` bytes. */
static int chunked_ends(const char *text, long long want)
{
    static const size_t steps[] = {1, 2, 3, 7, 100000};

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        struct dataport_body b;
        long long got;

        dataport_body_init(&b, DP_BODY_CHUNKED, 0);
        got = feed(&b, text, steps[i]);
        if (got != want || (want >= 0 && !b.done)) {
            fprintf(stderr, "chunked \"%s\" in %zu: %lld (done %d), expected %lld\n", text,
                    steps[i], got, b.done, want);
            return 0;
        }
    }
    return 1;
}

static void test_chunked(void)
{
    CHECK(chunked_ends("0\r\n\r\n", 5));
    CHECK(chunked_ends("5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\n", 15));
    CHECK(chunked_ends("A;ext=1\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT", 38));
    CHECK(chunked_ends("1f\r\n0123456789012345678901234567890\r\n0\r\n\r\n", 42));
    /* what looks like a chunk end inside data is data */
    CHECK(chunked_ends("7\r\n0\r\n\r\nab\r\n0\r\n\r\n", 17));
    /* malformed: no digits, bare LF, missing CRLF after data, a control byte
     * in an extension, a size over 15 hex digits */
    CHECK(chunked_ends("\r\n", -1));
    CHECK(chunked_ends("5\nhello\r\n0\r\n\r\n", -1));
    CHECK(chunked_ends("5\r\nhelloX\r\n", -1));
    CHECK(chunked_ends("5;a\001\r\nhello\r\n", -1));
    CHECK(chunked_ends("1000000000000000\r\n", -1));
    CHECK(chunked_ends("0\r\nBad\nTrailer\r\n\r\n", -1));
}

static void test_length(void)
{
    struct dataport_body b;

    dataport_body_init(&b, DP_BODY_LENGTH, 5);
    CHECK(!b.done && dataport_body_feed(&b, "hel", 3) == 3 && !b.done);
    CHECK(dataport_body_feed(&b, "loGET", 5) == 2 && b.done);
    CHECK(dataport_body_feed(&b, "more", 4) == 0);
    dataport_body_init(&b, DP_BODY_LENGTH, 0);
    CHECK(b.done);
    dataport_body_init(&b, DP_BODY_NONE, 0);
    CHECK(b.done && dataport_body_feed(&b, "x", 1) == 0);
    dataport_body_init(&b, DP_BODY_CLOSE, 0);
    CHECK(!b.done && dataport_body_feed(&b, "anything", 8) == 8 && !b.done);
}

/* The response head text parses (ok) and its body is delimited as kind/len. */
static int resp_is(const char *text, int head_request, int ok, enum dataport_body_kind kind,
                   unsigned long long len, int keep)
{
    struct dataport_resp r;
    struct dataport_body b;
    const char *why = NULL;
    int rc = dataport_resp_parse(text, strlen(text), &r, &why);

    if (!ok)
        return rc == -1 && why != NULL;
    if (rc != 0) {
        fprintf(stderr, "refused \"%s\": %s\n", text, why);
        return 0;
    }
    dataport_resp_body(&r, head_request, &b);
    return b.kind == kind && (kind != DP_BODY_LENGTH || b.left == len || (len == 0 && b.done)) &&
           r.keep == keep;
}

static void test_response_heads(void)
{
    CHECK(resp_is("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", 0, 1, DP_BODY_LENGTH, 12, 1));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n", 0, 1, DP_BODY_CHUNKED, 0,
                  1));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nX: y\r\n\r\n", 0, 1, DP_BODY_CLOSE, 0, 1));
    CHECK(resp_is("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", 0, 1, DP_BODY_LENGTH, 1, 0));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n", 0, 1,
                  DP_BODY_LENGTH, 1, 0));
    /* no body: HEAD, 204, 304, whatever the headers say */
    CHECK(resp_is("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", 1, 1, DP_BODY_NONE, 0, 1));
    CHECK(resp_is("HTTP/1.1 204 No Content\r\n\r\n", 0, 1, DP_BODY_NONE, 0, 1));
    CHECK(resp_is("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", 0, 1, DP_BODY_NONE, 0,
                  1));
    /* refused: two framings, repeated or signed or spaced lengths, another coding, bare LF or
     * CR, a folded line, a name that is not a token, not HTTP/1.x, a NUL */
    CHECK(resp_is("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
                  0, 0, 0, 0));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 0, 0, 0, 0,
                  0));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n", 0, 0, 0, 0, 0));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nContent-Length: 5 5\r\n\r\n", 0, 0, 0, 0, 0));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 0, 0, 0, 0, 0));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked"
                  "\r\n\r\n",
                  0, 0, 0, 0, 0));
    CHECK(resp_is("HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", 0, 0, 0, 0, 0));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", 0, 0, 0, 0, 0));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", 0, 0, 0, 0, 0));
    CHECK(resp_is("HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\n", 0, 0, 0, 0, 0));
    CHECK(resp_is("HTTP/2 200 OK\r\n\r\n", 0, 0, 0, 0, 0));
    CHECK(resp_is("HTTP/1.1 20 OK\r\n\r\n", 0, 0, 0, 0, 0));
    {
        const char nul[] = "HTTP/1.1 200 OK\r\nA: \0\r\n\r\n";
        struct dataport_resp r;
        const char *why = NULL;
        CHECK(dataport_resp_parse(nul, sizeof(nul) - 1, &r, &why) == -1);
    }
}

/* A bodiless answer (HEAD, 204, 304) with a body length, as hostile code in
 * a sandbox would send it, the claimed bytes right behind: the response ends
 * at its head (none of them is the body), and the connection is marked for
 * closing; one that claims nothing stays keepable. */
static int false_body(const char *text, int head_request)
{
    struct dataport_resp r;
    struct dataport_body b;
    const char *why = NULL;
    const char *end = strstr(text, "\r\n\r\n") + 4;
    size_t hl = (size_t)(end - text);

    if (dataport_resp_parse(text, hl, &r, &why) != 0)
        return -1;
    dataport_resp_body(&r, head_request, &b);
    if (!b.done || dataport_body_feed(&b, end, strlen(end)) != 0)
        return -1;
    return dataport_resp_false_body(&r, head_request);
}

static void test_false_bodies(void)
{
    CHECK(false_body("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n0123456789", 0) == 1);
    CHECK(false_body("HTTP/1.1 304 Not Modified\r\nContent-Length: 6\r\n\r\nSECRET", 0) == 1);
    CHECK(false_body("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nSECRET", 1) == 1);
    CHECK(false_body("HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "6\r\nSECRET\r\n0\r\n\r\n",
                     0) == 1);
    CHECK(false_body("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 1) == 1);
    /* claiming nothing: kept */
    CHECK(false_body("HTTP/1.1 204 No Content\r\n\r\n", 0) == 0);
    CHECK(false_body("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", 0) == 0);
    CHECK(false_body("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n", 0) == 0);
}

/* Bytes after a response's end, in the read that ended it: the body takes
 * only its own, whatever the pieces, so the rest is seen as stray (the data
 * port then closes that connection rather than keep it). */
static int stray_after(const char *head_text, const char *after, long long want)
{
    static const size_t steps[] = {1, 2, 5, 100000};
    struct dataport_resp r;
    const char *why = NULL;

    if (dataport_resp_parse(head_text, strlen(head_text), &r, &why) != 0)
        return 0;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        struct dataport_body b;
        long long used;

        dataport_resp_body(&r, 0, &b);
        used = feed(&b, after, steps[i]);
        if (used != want || !b.done || (size_t)used >= strlen(after))
            return 0;
    }
    return 1;
}

static void test_stray_bytes(void)
{
    const char *evil = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nSECRET";
    char buf[256];

    snprintf(buf, sizeof(buf), "ok%s", evil);
    CHECK(stray_after("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", buf, 2));
    snprintf(buf, sizeof(buf), "2\r\nok\r\n0\r\n\r\n%s", evil);
    CHECK(stray_after("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", buf, 12));
    snprintf(buf, sizeof(buf), "0\r\nX-T: 1\r\n\r\n\r\n"); /* a CRLF past the trailers */
    CHECK(stray_after("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", buf, 13));
}

static int forwards(const char *head, const char *keep, const char *want)
{
    char out[1024];
    size_t n = dataport_resp_forward(head, strlen(head), keep, out);

    if (n > strlen(head) + DATAPORT_KEEP_EXTRA || n != strlen(want) || memcmp(out, want, n) != 0) {
        fprintf(stderr, "forwarded \"%.*s\", expected \"%s\"\n", (int)n, out, want);
        return 0;
    }
    return 1;
}

static void test_response_forward(void)
{
    /* a sandbox's own X-Corral-* lines never reach the gateway */
    CHECK(forwards("HTTP/1.1 200 OK\r\nX-Corral-Keep: forged\r\nA: b\r\nx-corral-x: y\r\n\r\n",
                   NULL, "HTTP/1.1 200 OK\r\nA: b\r\n\r\n"));
    CHECK(forwards("HTTP/1.1 204 No Content\r\nX-Corral-Keep: forged\r\n\r\n", "123:abc",
                   "HTTP/1.1 204 No Content\r\nX-Corral-Keep: 123:abc\r\n\r\n"));
    /* a 204 reaches nobody with a body length; a 304's or a 200's is kept */
    CHECK(forwards("HTTP/1.1 204 No Content\r\ncontent-length: 10\r\nA: b\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n",
                   NULL, "HTTP/1.1 204 No Content\r\nA: b\r\n\r\n"));
    CHECK(forwards("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", NULL,
                   "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n"));
    CHECK(forwards("HTTP/1.1 200 OK\r\nContent-Length-X: 1\r\nContent-Length: 2\r\n\r\n", NULL,
                   "HTTP/1.1 200 OK\r\nContent-Length-X: 1\r\nContent-Length: 2\r\n\r\n"));
    CHECK(forwards("HTTP/1.1 204 No Content\r\nContent-Length-X: 1\r\n\r\n", NULL,
                   "HTTP/1.1 204 No Content\r\nContent-Length-X: 1\r\n\r\n"));
}

/* The request's body framing from its head. */
static int request_is(const char *text, int ok, enum dataport_body_kind kind)
{
    struct dataport_head h;
    struct dataport_body b;
    const char *why = NULL;

    memset(&h, 0, sizeof(h));
    h.buf = text;
    h.len = strlen(text);
    if (dataport_head_parse(&h) != 0)
        return 0;
    if (dataport_head_body(&h, &b, &why) != 0)
        return !ok && why != NULL;
    return ok && b.kind == kind;
}

static void test_request_framing(void)
{
    CHECK(request_is("GET / HTTP/1.1\r\n\r\n", 1, DP_BODY_NONE));
    CHECK(request_is("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n", 1, DP_BODY_LENGTH));
    CHECK(request_is("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 1, DP_BODY_CHUNKED));
    CHECK(request_is("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", 0, 0));
    CHECK(request_is("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 0, 0));
    CHECK(request_is("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                     0, 0));
    CHECK(request_is("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 0, 0));
}

/* Fed one byte at a time, as a hostile sandbox may send it: the end is found
 * at its place, across the calls' boundaries, and never before. */
static long long head_end_dripped(const char *text)
{
    size_t n = strlen(text), seen = 0;

    for (size_t len = 1; len <= n; len++) {
        const char *end = dataport_head_end(text, len, &seen);
        if (end)
            return end - text;
        if (seen != len)
            return -2; /* it must remember how far it looked */
    }
    return -1;
}

static void test_head_end(void)
{
    size_t seen = 0;

    CHECK(head_end_dripped("HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody") == 21);
    CHECK(head_end_dripped("\r\n\r\n") == 0);
    CHECK(head_end_dripped("HTTP/1.1 200 OK\r\nA: b\r\n\r") == -1);
    CHECK(head_end_dripped("a\n\r\n\r\rb\r\n\nc") == -1);
    CHECK(dataport_head_end("x\r\n\r\n", 4, &seen) == NULL && seen == 4);
    CHECK(dataport_head_end("x\r\n\r\n", 4, &seen) == NULL && seen == 4);
    CHECK(dataport_head_end("x\r\n\r\n", 5, &seen) != NULL && seen == 0);
    /* a search state longer than the buffer (a new message): searched whole */
    seen = 99;
    CHECK(dataport_head_end("x\r\n\r\n", 5, &seen) != NULL && seen == 0);
    seen = 0;
    CHECK(dataport_head_end("", 0, &seen) == NULL && seen == 0);
}

void unit_dataport_frame(int *total_passed, int *total_failed)
{
    test_head_end();
    test_chunked();
    test_length();
    test_response_heads();
    test_false_bodies();
    test_stray_bytes();
    test_response_forward();
    test_request_framing();
    *total_passed += passed;
    *total_failed += failed;
}
