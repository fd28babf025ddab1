/* Unit tests of common/log_format.c: every line is one JSON object that
 * jansson parses back to what was logged, whatever bytes the message holds;
 * context fields appear only when set; a long message is cut, the line stays
 * valid and keeps its context. Also log.c's context: log_sandbox's fields
 * last one line, a thread's field wins over the process's. */
#include "check.h"
#include "log.h"
#include "stderr_capture.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void unit_log(int *total_passed, int *total_failed);

static int passed, failed;

static struct log_line line_of(const char *msg)
{
    struct log_line l = {.level = "info", .service = "unit", .pid = 42, .msg = msg};

    l.when.tv_sec = 1764583200; /* 2025-12-01T10:00:00Z */
    l.when.tv_nsec = 7000000;
    return l;
}

/* The line parsed back; NULL when it is not exactly one JSON object and "\n". */
static json_t *parse(const struct log_line *l, size_t cap)
{
    char buf[8192];
    size_t n = log_format(buf, cap, l);

    if (n != strlen(buf) || n >= cap || n < 2 || buf[n - 1] != '\n' || memchr(buf, '\n', n - 1))
        return NULL;
    return json_loads(buf, 0, NULL);
}

static int field_is(json_t *o, const char *name, const char *want)
{
    const char *got = json_string_value(json_object_get(o, name));
    return got && strcmp(got, want) == 0;
}

static void test_fields(void)
{
    struct log_line l = line_of("plain");
    json_t *o;

    l.fields[LOG_REQUEST_ID] = "rid1";
    l.fields[LOG_SANDBOX] = "sb1";
    l.fields[LOG_TIER] = ""; /* empty: left out */
    o = parse(&l, 4096);
    CHECK(o && field_is(o, "time", "2025-12-01T10:00:00.007Z") && field_is(o, "level", "info"));
    CHECK(o && field_is(o, "service", "unit") && field_is(o, "msg", "plain"));
    CHECK(o && json_integer_value(json_object_get(o, "pid")) == 42);
    CHECK(o && field_is(o, "request_id", "rid1") && field_is(o, "sandbox", "sb1"));
    CHECK(o && !json_object_get(o, "tier") && !json_object_get(o, "workspace") &&
          !json_object_get(o, "worker"));
    json_decref(o);
}

static void test_escaping(void)
{
    struct log_line l = line_of("say \"hi\"\\ then\nnew line\r\ttab \x01\x1f\x7f"
                                " end");
    json_t *o = parse(&l, 4096);

    CHECK(o && field_is(o, "msg",
                        "say \"hi\"\\ then\nnew line\r\ttab \x01\x1f\x7f"
                        " end"));
    json_decref(o);
    /* Valid UTF-8 is kept; a stray byte, a cut sequence, an overlong form and
     * a surrogate each become U+FFFD. */
    l = line_of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82|\xff|\xc3|\xc0\xaf|\xed\xa0\x80|");
    o = parse(&l, 4096);
    CHECK(o && field_is(o, "msg",
                        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82|\xef\xbf\xbd|\xef\xbf\xbd|"
                        "\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"));
    json_decref(o);
    l = line_of("ok");
    l.fields[LOG_WORKSPACE] = "w\"s\n";
    o = parse(&l, 4096);
    CHECK(o && field_is(o, "workspace", "w\"s\n"));
    json_decref(o);
}

static void test_cut(void)
{
    char big[3000], esc[16];
    struct log_line l;
    json_t *o;

    memset(big, '\n', sizeof(big) - 1); /* each escapes to two bytes */
    big[sizeof(big) - 1] = '\0';
    l = line_of(big);
    l.fields[LOG_SANDBOX] = "sbx";
    o = parse(&l, LOG_LINE_MIN);
    CHECK(o && field_is(o, "sandbox", "sbx") && json_string_length(json_object_get(o, "msg")) > 0);
    json_decref(o);
    /* An escape is never cut in half. */
    CHECK(log_json_escape(esc, 8, "ab\x01") == 2 && strcmp(esc, "ab") == 0);
    CHECK(log_json_escape(esc, 9, "ab\x01") == 8 && strcmp(esc, "ab\\u0001") == 0);
}

/* The one line emit logged, parsed. */
static json_t *logged(void (*emit)(void *))
{
    char *text = stderr_capture(emit, NULL);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;

    free(text);
    return o;
}

static void emit_sandbox(void *arg)
{
    (void)arg;
    log_sandbox("warn", "sb9", "GVISOR", "kill: %s", "gone");
}

static void emit_plain(void *arg)
{
    (void)arg;
    log_info("after");
}

static void test_context(void)
{
    json_t *o;

    log_set_name("unit-log");
    log_ctx_set_process(LOG_WORKER, "wk-process");
    log_ctx_set(LOG_REQUEST_ID, "r1");
    o = logged(emit_sandbox);
    CHECK(o && field_is(o, "sandbox", "sb9") && field_is(o, "tier", "GVISOR"));
    CHECK(o && field_is(o, "worker", "wk-process") && field_is(o, "request_id", "r1"));
    CHECK(o && field_is(o, "msg", "kill: gone") && field_is(o, "level", "warn"));
    CHECK(o && field_is(o, "service", "unit-log"));
    json_decref(o);
    log_ctx_set(LOG_WORKER, "wk-thread"); /* the thread's own wins */
    o = logged(emit_plain);
    CHECK(o && !json_object_get(o, "sandbox") && !json_object_get(o, "tier"));
    CHECK(o && field_is(o, "worker", "wk-thread") && field_is(o, "request_id", "r1"));
    json_decref(o);
    log_ctx_clear();
    log_ctx_set_process(LOG_WORKER, NULL);
    o = logged(emit_plain);
    CHECK(o && !json_object_get(o, "request_id") && !json_object_get(o, "worker"));
    json_decref(o);
}

void unit_log(int *total_passed, int *total_failed)
{
    test_fields();
    test_escaping();
    test_cut();
    test_context();
    *total_passed += passed;
    *total_failed += failed;
}
