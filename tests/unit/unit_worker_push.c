/* Unit tests of the worker's batch bodies: handlers/body_array.c (an array
 * parsed element by element, all or nothing), telemetry_parse.c (POST
 * /v1/worker/telemetry) and worker_audit_parse.c (POST /v1/worker/audit):
 * every refusal's status and exact message, and the fields a good body
 * gives. */
#include "body_array.h"
#include "check.h"
#include "telemetry_parse.h"
#include "worker_audit_parse.h"

#include <stdlib.h>
#include <string.h>

void unit_worker_push(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define SB1 "0123456789abcdef0123456789abcdef"
#define SB2 "fedcba9876543210fedcba9876543210"
#define NOW 1796119200000LL
#define NOW_NS "1796119200000000007"

/* body_array with ints: a negative one is refused; frees counted. */
static int frees;

static int int_parse(const json_t *item, size_t i, void *elem, void *ctx, char *err, size_t len)
{
    (void)ctx;
    if (!json_is_integer(item) || json_integer_value(item) < 0) {
        snprintf(err, len, "[%zu]: bad", i);
        return -1;
    }
    *(int *)elem = (int)json_integer_value(item);
    return 0;
}

static void int_free(void *elem)
{
    (void)elem;
    frees++;
}

static void test_body_array(void)
{
    const struct body_array_item how = {.size = sizeof(int), .parse = int_parse, .free = int_free};
    json_t *a = json_loads("[1,2,3]", 0, NULL), *bad = json_loads("[1,-2,3]", 0, NULL);
    json_t *empty = json_array(), *obj = json_object();
    char err[32] = "";
    size_t n = 99;
    void *v;
    int *iv;

    CHECK(body_array_parse(a, 3, &how, &v, &n, err, sizeof(err)) == BODY_ARRAY_OK && n == 3);
    iv = v;
    CHECK(iv && iv[0] == 1 && iv[1] == 2 && iv[2] == 3);
    frees = 0;
    body_array_free(v, n, &how);
    CHECK(frees == 3);
    CHECK(body_array_parse(a, 2, &how, &v, &n, err, sizeof(err)) == BODY_ARRAY_SHAPE && !v &&
          n == 0);
    CHECK(body_array_parse(obj, 9, &how, &v, &n, err, sizeof(err)) == BODY_ARRAY_SHAPE && !v);
    CHECK(body_array_parse(NULL, 9, &how, &v, &n, err, sizeof(err)) == BODY_ARRAY_SHAPE && !v);
    /* refused at [1]: elements 0 and 1 freed, nothing kept */
    frees = 0;
    CHECK(body_array_parse(bad, 9, &how, &v, &n, err, sizeof(err)) == BODY_ARRAY_ITEM && !v &&
          n == 0 && strcmp(err, "[1]: bad") == 0 && frees == 2);
    /* empty: a vector all the same */
    CHECK(body_array_parse(empty, 9, &how, &v, &n, err, sizeof(err)) == BODY_ARRAY_OK && v &&
          n == 0);
    body_array_free(v, n, &how);
    body_array_free(NULL, 0, &how);
    json_decref(a);
    json_decref(bad);
    json_decref(empty);
    json_decref(obj);
}

struct bad {
    const char *body;
    int status;
    const char *message; /* exact */
};

/* A JSON array of n copies of item, as text (malloc'ed). */
static char *repeat(const char *key, const char *item, size_t n)
{
    size_t len = strlen(key) + 16 + n * (strlen(item) + 1);
    char *s = malloc(len), *p = s;

    p += sprintf(p, "{\"%s\":[", key);
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s%s", i ? "," : "", item);
    sprintf(p, "]}");
    return s;
}

static int telemetry_status(const char *text, char *err, size_t len)
{
    struct telemetry_body b;
    json_t *body = json_loads(text, 0, NULL);
    int st = telemetry_body_parse(body, NOW, &b, err, len);

    CHECK(st == 0 || (b.items == NULL && b.n == 0));
    telemetry_body_free(&b);
    json_decref(body);
    return st;
}

#define LINE(text) "{\"ts_ns\":" NOW_NS ",\"line\":" text "}"

static const struct bad telemetry_bads[] = {
    {"{}", 400, "sandboxes: must be an array of at most 1000"},
    {"{\"sandboxes\":{}}", 400, "sandboxes: must be an array of at most 1000"},
    {"{\"sandboxes\":[{\"id\":\"x\"}]}", 400, "sandboxes[0].id: must be a sandbox id"},
    {"{\"sandboxes\":[{\"id\":\"" SB1 "\"},{\"id\":5}]}", 400,
     "sandboxes[1].id: must be a sandbox id"},
    {"{\"sandboxes\":[{\"id\":\"" SB1 "\",\"metric\":7}]}", 400,
     "sandboxes[0].metric: must be an object"},
    {"{\"sandboxes\":[{\"id\":\"" SB1 "\",\"metric\":{\"ts_ms\":1}}]}", 400,
     "sandboxes[0].metric.ts_ms: must be ms since the epoch, within the last hour"},
    {"{\"sandboxes\":[{\"id\":\"" SB1 "\",\"logs\":{}}]}", 400,
     "sandboxes[0].logs: must be an array of at most 200 lines"},
    {"{\"sandboxes\":[{\"id\":\"" SB1 "\",\"logs\":[" LINE("\"a\"") "," LINE("5") "]}]}", 400,
     "sandboxes[0].logs[1].line: must be a string"},
    {"{\"sandboxes\":[{\"id\":\"" SB1 "\",\"logs\":[7]}]}", 400,
     "sandboxes[0].logs[0]: must be an object {ts_ns, line}"},
    {"{\"sandboxes\":[{\"id\":\"" SB1 "\",\"logs\":[{\"ts_ns\":1,\"line\":\"a\"}]}]}", 400,
     "sandboxes[0].logs[0].ts_ns: must be ns since the epoch, within the last hour"},
};

static void test_telemetry(void)
{
    char err[256], *big;
    struct telemetry_body b;
    json_t *body;

    for (size_t i = 0; i < sizeof(telemetry_bads) / sizeof(telemetry_bads[0]); i++) {
        int st = telemetry_status(telemetry_bads[i].body, err, sizeof(err));
        CHECK(st == telemetry_bads[i].status && strcmp(err, telemetry_bads[i].message) == 0);
        if (st != telemetry_bads[i].status || strcmp(err, telemetry_bads[i].message) != 0)
            fprintf(stderr, "  telemetry row %zu: %d \"%s\"\n", i, st, err);
    }
    big = repeat("sandboxes", "{\"id\":\"" SB1 "\"}", 1000);
    CHECK(telemetry_status(big, err, sizeof(err)) == 0);
    free(big);
    big = repeat("sandboxes", "{\"id\":\"" SB1 "\"}", 1001);
    CHECK(telemetry_status(big, err, sizeof(err)) == 400 &&
          strcmp(err, "sandboxes: must be an array of at most 1000") == 0);
    free(big);

    body = json_pack("{s:[{s:s, s:{s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I}, s:[{s:I, s:s}]}, "
                     "{s:s}]}",
                     "sandboxes", "id", SB1, "metric", "ts_ms", (json_int_t)NOW, "cpu_count",
                     (json_int_t)2, "cpu_used_pct", 12.5, "mem_used", (json_int_t)10, "mem_total",
                     (json_int_t)20, "mem_cache", (json_int_t)3, "disk_used", (json_int_t)4,
                     "disk_total", (json_int_t)5, "logs", "ts_ns", (json_int_t)(NOW * 1000000 + 7),
                     "line", "hello", "id", SB2);
    CHECK(telemetry_body_parse(body, NOW, &b, err, sizeof(err)) == 0 && b.n == 2);
    CHECK(b.n == 2 && strcmp(b.items[0].sbid, SB1) == 0 && b.items[0].metric &&
          b.items[0].metric_ms == NOW && b.items[0].n == 1 && b.items[0].ms[0] == NOW &&
          strstr(b.items[0].logs[0], "\"hello\""));
    CHECK(b.n == 2 && strcmp(b.items[1].sbid, SB2) == 0 && !b.items[1].metric && b.items[1].n == 0);
    telemetry_body_free(&b);
    CHECK(b.items == NULL && b.n == 0);
    json_decref(body);
}

/* The most lines one sandbox may push, and one more. */
static void test_telemetry_lines(void)
{
    char err[256];

    for (size_t n = 200; n <= 201; n++) {
        json_t *logs = json_array(), *body;
        struct telemetry_body b;
        for (size_t i = 0; i < n; i++)
            json_array_append_new(
                logs, json_pack("{s:I, s:s}", "ts_ns", (json_int_t)(NOW * 1000000), "line", "x"));
        body = json_pack("{s:[{s:s, s:o}]}", "sandboxes", "id", SB1, "logs", logs);
        int st = telemetry_body_parse(body, NOW, &b, err, sizeof(err));
        CHECK(n == 200 ? st == 0 && b.items[0].n == 200
                       : st == 400 && strcmp(err, "sandboxes[0].logs: must be an array of at "
                                                  "most 200 lines") == 0);
        telemetry_body_free(&b);
        json_decref(body);
    }
}

#define GATE_MSG "must be a gate decision {time, sandbox, op, path or command, branch, answer, by}"

/* A gate line with one field replaced (value NULL: removed). */
static char *gate_line(const char *key, const char *value)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "time", "2026-12-01T10:00:00Z",
                          "sandbox", SB1, "op", "read", "path", "/etc/hosts", "branch", "policy",
                          "answer", "deny", "by", "gate");
    char *s;

    if (key && value)
        json_object_set_new(o, key, json_string(value));
    else if (key)
        json_object_del(o, key);
    s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* The body {"lines": [good, the line]} parsed: its status, err. */
static int audit_status(const char *line, char *err, size_t len)
{
    struct worker_audit_body b;
    char *good = gate_line(NULL, NULL);
    json_t *body = json_pack("{s:[s, s]}", "lines", good, line);
    int st = worker_audit_body_parse(body, &b, err, len);

    CHECK(st == 0 || (b.v == NULL && b.n == 0));
    worker_audit_body_free(&b);
    json_decref(body);
    free(good);
    return st;
}

struct gate_bad {
    const char *key, *value; /* the change to a good line */
};

static const struct gate_bad gate_bads[] = {
    {"time", NULL},
    {"time", ""},
    {"time", "2026-12-01T10:00:00.000000000000000000000Z"},
    {"sandbox", NULL},
    {"sandbox", "not-an-id"},
    {"sandbox", SB1 "0"},
    {"op", NULL},
    {"op", "chmod"},
    {"path", NULL},
    {"branch", NULL},
    {"branch", "root"},
    {"answer", "maybe"},
    {"answer", NULL},
    {"by", "cat"},
    {"by", NULL},
};

static void test_worker_audit(void)
{
    char err[256], *line, big[9000];
    struct worker_audit_body b;
    json_t *body;

    for (size_t i = 0; i < sizeof(gate_bads) / sizeof(gate_bads[0]); i++) {
        line = gate_line(gate_bads[i].key, gate_bads[i].value);
        CHECK(audit_status(line, err, sizeof(err)) == 400 &&
              strcmp(err, "lines[1]: " GATE_MSG) == 0);
        free(line);
    }
    CHECK(audit_status("{not json", err, sizeof(err)) == 400 &&
          strcmp(err, "lines[1]: " GATE_MSG) == 0);
    CHECK(audit_status("[]", err, sizeof(err)) == 400 && strcmp(err, "lines[1]: " GATE_MSG) == 0);
    /* longer than 8192 bytes: refused before it is parsed */
    line = gate_line("path", "/x");
    memset(big, ' ', sizeof(big));
    memcpy(big, line, strlen(line));
    big[8193] = '\0';
    CHECK(audit_status(big, err, sizeof(err)) == 400 && strcmp(err, "lines[1]: " GATE_MSG) == 0);
    big[8192] = '\0';
    CHECK(audit_status(big, err, sizeof(err)) == 0);
    free(line);

    body = json_loads("{\"lines\":[\"x\",5]}", 0, NULL);
    CHECK(worker_audit_body_parse(body, &b, err, sizeof(err)) == 400 &&
          strcmp(err, "lines[0]: " GATE_MSG) == 0);
    json_decref(body);
    body = json_loads("{\"lines\":[5]}", 0, NULL);
    CHECK(worker_audit_body_parse(body, &b, err, sizeof(err)) == 400 &&
          strcmp(err, "lines[0]: must be a string") == 0);
    json_decref(body);
    body = json_loads("{\"lines\":\"x\"}", 0, NULL);
    CHECK(worker_audit_body_parse(body, &b, err, sizeof(err)) == 400 &&
          strcmp(err, "lines: must be an array of at most 200 audit lines") == 0);
    json_decref(body);
    line = repeat("lines", "\"x\"", 201);
    body = json_loads(line, 0, NULL);
    CHECK(worker_audit_body_parse(body, &b, err, sizeof(err)) == 400 &&
          strcmp(err, "lines: must be an array of at most 200 audit lines") == 0);
    json_decref(body);
    free(line);
}

/* Good lines: rebuilt from the checked fields only, exec's as a command. */
static void test_worker_audit_good(void)
{
    char err[256], *a = gate_line("answer", "allow"), *e;
    struct worker_audit_body b;
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "time", "t", "sandbox", SB2,
                          "op", "exec", "command", "ls -l", "branch", "ask", "answer", "deny", "by",
                          "person", "extra", "dropped");
    json_t *body;
    char *got;

    e = json_dumps(o, JSON_COMPACT);
    body = json_pack("{s:[s, s]}", "lines", a, e);
    CHECK(worker_audit_body_parse(body, &b, err, sizeof(err)) == 0 && b.n == 2);
    CHECK(b.n == 2 && b.v[0].allowed && strcmp(b.v[0].sbid, SB1) == 0 && !b.v[1].allowed &&
          strcmp(b.v[1].sbid, SB2) == 0);
    got = b.n == 2 ? json_dumps(b.v[1].fields, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    CHECK(got && strcmp(got, "{\"answer\":\"deny\",\"branch\":\"ask\",\"by\":\"person\","
                             "\"command\":\"ls -l\",\"op\":\"exec\",\"sandbox\":\"" SB2
                             "\",\"time\":\"t\"}") == 0);
    free(got);
    json_decref(body); /* the decisions hold their own copies */
    CHECK(b.n == 2 && strcmp(b.v[1].sbid, SB2) == 0);
    worker_audit_body_free(&b);
    body = json_pack("{s:[]}", "lines");
    CHECK(worker_audit_body_parse(body, &b, err, sizeof(err)) == 0 && b.n == 0);
    worker_audit_body_free(&b);
    json_decref(body);
    json_decref(o);
    free(a);
    free(e);
}

void unit_worker_push(int *total_passed, int *total_failed)
{
    test_body_array();
    test_telemetry();
    test_telemetry_lines();
    test_worker_audit();
    test_worker_audit_good();
    *total_passed += passed;
    *total_failed += failed;
}
