/* Unit tests of workerd/dataport_head.c: the data port's request head parser
 * (the X-Corral-* headers, upgrades, malformed heads), the gateway signature
 * check (known-answer HMAC, expiry both ways, the previous key, every
 * malformed shape, no key yet), the head forwarded to the sandbox, and the
 * JSON of a refusal. */
#include "check.h"
#include "dataport_head.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void unit_dataport(int *total_passed, int *total_failed);

static int passed, failed;

#define KEY "worker-key-0123456789abcdef"
#define OLD_KEY "old-key-0123456789abcdef"
#define NOW 1700000000LL
/* HMAC-SHA-256("sb1:49983:1700000000") under KEY and OLD_KEY, computed apart
 * (Python's hmac), not by the code under test. */
#define SIG "5461a57c1e048a21d1dc17fd64ca1faf36093944f6395c9805afdbd82a308c2e"
#define OLD_SIG "ad6e6985c3715418e81a105a753288bb6cdc4e4d0ddf99619ed6b81ab3845765"

static int parse(const char *text, struct dataport_head *h)
{
    memset(h, 0, sizeof(*h));
    h->buf = text;
    h->len = strlen(text);
    return dataport_head_parse(h);
}

static void test_parse(void)
{
    struct dataport_head h;

    CHECK(parse("GET /x HTTP/1.1\r\nHost: a\r\nx-corral-sandbox:  sb1 \r\n"
                "X-CORRAL-PORT:\t49983\r\nX-Corral-Gateway: 1700000000:" SIG "\r\n\r\n",
                &h) == 0);
    CHECK(!strcmp(h.sandbox, "sb1") && !strcmp(h.port, "49983") &&
          !strcmp(h.gateway, "1700000000:" SIG) && h.n_sandbox == 1 && h.n_port == 1 &&
          h.n_gateway == 1 && !h.upgrade);
    /* a request line alone: nothing named, nothing counted */
    CHECK(parse("GET / HTTP/1.1\r\n\r\n", &h) == 0 && h.n_sandbox == 0 && h.sandbox[0] == '\0');
    /* repeated headers are counted (and refused by the check) */
    CHECK(parse("GET / HTTP/1.1\r\nX-Corral-Sandbox: a\r\nX-Corral-Sandbox: b\r\n\r\n", &h) == 0 &&
          h.n_sandbox == 2);
    /* an over-long value is cut, never taken whole */
    CHECK(parse("GET / HTTP/1.1\r\nX-Corral-Port: 1234567890\r\n\r\n", &h) == 0 &&
          strlen(h.port) == sizeof(h.port) - 1);
    /* upgrade: an Upgrade header and the token in Connection, any case */
    CHECK(parse("GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\r\n",
                &h) == 0 &&
          h.upgrade == 1);
    CHECK(parse("GET / HTTP/1.1\r\nConnection: upgrade\r\n\r\n", &h) == 0 && h.upgrade == 0);
    CHECK(parse("GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: close\r\n\r\n", &h) == 0 &&
          h.upgrade == 0);
    CHECK(parse("GET / HTTP/1.1\r\nUpgrade:\r\nConnection: upgrade\r\n\r\n", &h) == 0 &&
          h.upgrade == 0);
    CHECK(parse("GET / HTTP/1.1\r\nUpgrade: h2c\r\nConnection: upgraded\r\n\r\n", &h) == 0 &&
          h.upgrade == 0);
    /* malformed heads */
    CHECK(parse("\r\n\r\n", &h) == -1);                                  /* no request line */
    CHECK(parse("GET / HTTP/1.1\r\nno colon\r\n\r\n", &h) == -1);        /* a line without ':' */
    CHECK(parse("GET / HTTP/1.1\r\n: empty name\r\n\r\n", &h) == -1);    /* an empty name */
    CHECK(parse("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", &h) == -1); /* obs-fold */
    CHECK(parse("GET / HTTP/1.1\r\nA: b\r\n\tfolded: x\r\n\r\n", &h) == -1);
    CHECK(parse("GET / HTTP/1.1\r\nA: b\r\n", &h) == -1); /* truncated: no blank line */
    CHECK(parse("", &h) == -1);
}

/* dataport_signature_check of a head with these header values (NULL: absent). */
static int check(const char *sandbox, const char *port, const char *gateway, const char *key,
                 const char *previous, long long now, const char **why)
{
    char text[1024];
    struct dataport_head h;
    int n = snprintf(text, sizeof(text), "GET / HTTP/1.1\r\n");

    if (sandbox)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "X-Corral-Sandbox: %s\r\n", sandbox);
    if (port)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "X-Corral-Port: %s\r\n", port);
    if (gateway)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "X-Corral-Gateway: %s\r\n", gateway);
    snprintf(text + n, sizeof(text) - (size_t)n, "\r\n");
    *why = NULL;
    if (parse(text, &h) != 0)
        return 99;
    return dataport_signature_check(&h, key, previous, now, why);
}

/* 1 when refused (-1) with why starting with want. */
static int refused(const char *sandbox, const char *port, const char *gateway, const char *want)
{
    const char *why;

    return check(sandbox, port, gateway, KEY, NULL, NOW, &why) == -1 && why &&
           strncmp(why, want, strlen(want)) == 0;
}

static void test_signature(void)
{
    const char *good = "1700000000:" SIG, *why;
    char gw[160];

    CHECK(check("sb1", "49983", good, KEY, NULL, NOW, &why) == 0);
    CHECK(check("sb1", "49983", good, KEY, "", NOW, &why) == 0);
    /* freshness: DATAPORT_MAX_AGE seconds either way, not one more */
    CHECK(check("sb1", "49983", good, KEY, NULL, NOW + 60, &why) == 0);
    CHECK(check("sb1", "49983", good, KEY, NULL, NOW - 60, &why) == 0);
    CHECK(check("sb1", "49983", good, KEY, NULL, NOW + 61, &why) == -1 &&
          !strcmp(why, "gateway signature expired"));
    CHECK(check("sb1", "49983", good, KEY, NULL, NOW - 61, &why) == -1 &&
          !strcmp(why, "gateway signature expired"));
    /* re-enrolment: a gateway still signing with the previous key */
    CHECK(check("sb1", "49983", "1700000000:" OLD_SIG, KEY, OLD_KEY, NOW, &why) == 0);
    CHECK(check("sb1", "49983", "1700000000:" OLD_SIG, KEY, NULL, NOW, &why) == -1 &&
          !strcmp(why, "invalid gateway signature"));
    CHECK(check("sb1", "49983", good, OLD_KEY, NULL, NOW, &why) == -1);
    CHECK(check("sb1", "49983", good, OLD_KEY, KEY, NOW, &why) == 0);
    /* the signature binds sandbox, port and time */
    CHECK(refused("sb2", "49983", good, "invalid gateway signature"));
    CHECK(refused("sb1", "49984", good, "invalid gateway signature"));
    CHECK(check("sb1", "49983", "1700000001:" SIG, KEY, NULL, NOW, &why) == -1 &&
          !strcmp(why, "invalid gateway signature"));
    CHECK(refused("sb1", "49983", "1700000000:" OLD_SIG, "invalid gateway signature"));
    snprintf(gw, sizeof(gw), "1700000000:%s", SIG);
    gw[strlen(gw) - 1] = 'f'; /* the last hex digit changed (it was 'e') */
    CHECK(refused("sb1", "49983", gw, "invalid gateway signature"));
    snprintf(gw, sizeof(gw), "1700000000:%s", SIG);
    for (char *p = gw + 11; *p; p++) /* upper case hex is not what the gateway sends */
        *p = (char)(*p >= 'a' && *p <= 'f' ? *p - 32 : *p);
    CHECK(refused("sb1", "49983", gw, "invalid gateway signature"));
    /* missing or repeated headers */
    CHECK(refused(NULL, "49983", good, "missing or repeated"));
    CHECK(refused("sb1", NULL, good, "missing or repeated"));
    CHECK(refused("sb1", "49983", NULL, "missing or repeated"));
    CHECK(check("sb1\r\nX-Corral-Sandbox: sb1", "49983", good, KEY, NULL, NOW, &why) == -1 &&
          !strncmp(why, "missing or repeated", 19));
    /* malformed sandbox or port */
    CHECK(refused("", "49983", good, "malformed X-Corral-Sandbox or X-Corral-Port"));
    CHECK(refused("../sb1", "49983", good, "malformed X-Corral-Sandbox"));
    CHECK(refused("sb 1", "49983", good, "malformed X-Corral-Sandbox"));
    CHECK(refused("sb1", "0", good, "malformed X-Corral-Sandbox or X-Corral-Port"));
    CHECK(refused("sb1", "049983", good, "malformed"));
    CHECK(refused("sb1", "65536", good, "malformed"));
    CHECK(refused("sb1", "-1", good, "malformed"));
    CHECK(refused("sb1", "80a", good, "malformed"));
    CHECK(refused("sb1", "", good, "malformed"));
    memset(gw, 'a', 65);
    gw[65] = '\0'; /* one over DATAPORT_ID_MAX: cut to 64, so it matches no signature */
    CHECK(refused(gw, "49983", good, "invalid gateway signature"));
    gw[1] = '.';
    CHECK(refused(gw, "49983", good, "malformed X-Corral-Sandbox"));
    /* malformed X-Corral-Gateway */
    CHECK(refused("sb1", "49983", SIG, "malformed X-Corral-Gateway"));
    CHECK(refused("sb1", "49983", ":" SIG, "malformed X-Corral-Gateway"));
    CHECK(refused("sb1", "49983", "1700000000:", "malformed X-Corral-Gateway"));
    CHECK(refused("sb1", "49983", "1700000000:" SIG "0", "malformed X-Corral-Gateway"));
    CHECK(refused("sb1", "49983", "+1700000000:" SIG, "malformed X-Corral-Gateway"));
    CHECK(refused("sb1", "49983", "1700000000000:" SIG, "malformed X-Corral-Gateway"));
    CHECK(refused("sb1", "49983", "17e8:" SIG, "malformed X-Corral-Gateway"));
    CHECK(refused("sb1", "49983", "forged", "malformed X-Corral-Gateway"));
    /* no key yet: a 503 (-2), but only once the head itself is well formed */
    CHECK(check("sb1", "49983", good, NULL, NULL, NOW, &why) == -2 && strstr(why, "not enrolled"));
    CHECK(check("sb1", "49983", good, "", OLD_KEY, NOW, &why) == -2);
    CHECK(check("sb1", "49983", "forged", NULL, NULL, NOW, &why) == -1);
    CHECK(check("sb1", "49983", good, NULL, NULL, NOW + 61, &why) == -1);
}

static int forwards(const char *in, const char *want)
{
    struct dataport_head h;
    char out[1024];
    size_t n;

    if (parse(in, &h) != 0)
        return 0;
    n = dataport_head_forward(&h, out);
    if (n > h.len + DATAPORT_FORWARD_EXTRA || n != strlen(want) || memcmp(out, want, n) != 0) {
        fprintf(stderr, "forwarded \"%.*s\", expected \"%s\"\n", (int)n, out, want);
        return 0;
    }
    return 1;
}

static void test_forward(void)
{
    /* the X-Corral-* headers never reach the sandbox; the gateway's Connection
     * and Keep-Alive neither: the data port keeps its own connection */
    CHECK(forwards("POST /files HTTP/1.1\r\nHost: h\r\nX-Corral-Sandbox: sb1\r\n"
                   "x-corral-port: 1\r\nX-Corral-Gateway: g\r\nConnection: close\r\n"
                   "Keep-Alive: timeout=5\r\nContent-Length: 3\r\n\r\n",
                   "POST /files HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n"));
    CHECK(forwards("GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\n\r\n"));
    /* an upgrade keeps its Connection header */
    CHECK(forwards("GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "X-Corral-Port: 1\r\n\r\n",
                   "GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"));
    /* a header that only starts like one of ours is kept */
    CHECK(forwards("GET / HTTP/1.1\r\nX-Corral: a\r\nX-Corralx-y: b\r\n\r\n",
                   "GET / HTTP/1.1\r\nX-Corral: a\r\nX-Corralx-y: b\r\n\r\n"));
}

/* 1 when the answer is exactly status line, headers and body {code, message}. */
static int answers(int code, const char *message, const char *status_line, int retry_after)
{
    size_t n = 0;
    char *out = dataport_error_response(code, message, &n), *body;
    json_t *j;
    int ok;

    if (!out)
        return 0;
    body = strstr(out, "\r\n\r\n");
    j = body ? json_loads(body + 4, 0, NULL) : NULL;
    ok = n == strlen(out) && !strncmp(out, status_line, strlen(status_line)) &&
         strstr(out, "\r\nContent-Type: application/json\r\n") &&
         strstr(out, "\r\nConnection: close\r\n") &&
         !!strstr(out, "\r\nRetry-After: 1\r\n") == retry_after && j &&
         json_integer_value(json_object_get(j, "code")) == code &&
         !strcmp(json_string_value(json_object_get(j, "message")), message);
    if (ok) {
        char cl[48];
        snprintf(cl, sizeof(cl), "\r\nContent-Length: %zu\r\n", strlen(body + 4));
        ok = strstr(out, cl) != NULL;
    }
    json_decref(j);
    free(out);
    return ok;
}

static void test_error_response(void)
{
    size_t n = 0;
    char *out;

    CHECK(answers(403, "invalid gateway signature", "HTTP/1.1 403 Forbidden\r\n", 0));
    CHECK(answers(503, "worker data port busy; retry shortly",
                  "HTTP/1.1 503 Service Unavailable\r\n", 1));
    CHECK(answers(431, "request head over 65536 bytes",
                  "HTTP/1.1 431 Request Header Fields Too Large\r\n", 0));
    /* built with jansson: quotes, backslashes and control characters are escaped */
    CHECK(answers(502, "port \"8080\" \\ refused\n", "HTTP/1.1 502 Bad Gateway\r\n", 0));
    CHECK(answers(400, "bad \xff byte", "HTTP/1.1 400 Bad Request\r\n", 0) == 0);
    CHECK(answers(400, "Bad Request", "HTTP/1.1 400 Bad Request\r\n", 0));
    out = dataport_error_response(400, "bad \xff byte", &n); /* not UTF-8: the reason */
    CHECK(out && strstr(out, "\r\n\r\n{\"code\":400,\"message\":\"Bad Request\"}"));
    free(out);
    out = dataport_error_response(404, "sandbox not found", &n);
    CHECK(out && !strcmp(out, "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                              "Content-Length: 42\r\nConnection: close\r\n\r\n"
                              "{\"code\":404,\"message\":\"sandbox not found\"}"));
    free(out);
    /* not here or paused: byte for byte the gateway's own not-found */
    out = dataport_not_found_response("0123456789abcdef0123", &n);
    CHECK(out && n == strlen(out) &&
          !strcmp(out, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\n"
                       "Content-Length: 85\r\nConnection: close\r\n\r\n"
                       "{\"sandboxId\":\"0123456789abcdef0123\",\"message\":\"The sandbox was not "
                       "found\",\"code\":502}"));
    free(out);
}

void unit_dataport(int *total_passed, int *total_failed)
{
    test_parse();
    test_signature();
    test_forward();
    test_error_response();
    *total_passed += passed;
    *total_failed += failed;
}
