/* Table test of a Connect call's headers (envd/connect_parse.c):
 * Connect-Timeout-Ms and Keepalive-Ping-Interval are decimal digits and
 * nothing else; anything else, 0, or a number that overflows leaves the
 * call without a deadline and with the default keepalive, as an absent
 * header does. Content types match in any case, with or without
 * parameters. (The message parser's tests are unit_envd.c's
 * test_frames.) Linked into unit-envd (see unit_envd.c's main). */
#include "check.h"
#include "connect_parse.h"

#include <limits.h>
#include <stdio.h>

CHECK_COUNTERS;

void test_connect(int *total_passed, int *total_failed);

#define NOW 1000LL
#define DEFAULT_KA (RPC_KEEPALIVE_DEFAULT_S * 1000)

struct header_row {
    const char *timeout, *keepalive;
    long long now;
    long long deadline; /* 0: none */
    int keepalive_ms;
};

static const struct header_row rows[] = {
    {NULL, NULL, NOW, 0, DEFAULT_KA},
    {"5000", "30", NOW, NOW + 5000, 30000},
    {"1", "1", NOW, NOW + 1, 1000},
    {"007", "3600", NOW, NOW + 7, 3600000},
    /* refused: as if absent */
    {"0", "0", NOW, 0, DEFAULT_KA},
    {"5abc", "30s", NOW, 0, DEFAULT_KA}, /* atoll read these as 5 and 30 */
    {"-5", "-30", NOW, 0, DEFAULT_KA},
    {"+5", "+30", NOW, 0, DEFAULT_KA},
    {"", "", NOW, 0, DEFAULT_KA},
    {"5 ", " 30", NOW, 0, DEFAULT_KA},
    {"0x10", "1e2", NOW, 0, DEFAULT_KA},
    {"1.5", "2.5", NOW, 0, DEFAULT_KA},
    {NULL, "3601", NOW, 0, DEFAULT_KA},
    {"99999999999999999999", "99999999999999999999", NOW, 0, DEFAULT_KA},
    /* the deadline itself may not overflow */
    {"9223372036854775807", NULL, 0, LLONG_MAX, DEFAULT_KA},
    {"9223372036854775807", NULL, 1, 0, DEFAULT_KA},
    {"9223372036854774807", NULL, NOW, LLONG_MAX, DEFAULT_KA},
    {"9223372036854774808", NULL, NOW, 0, DEFAULT_KA},
};

static void test_content_types(void)
{
    CHECK(rpc_content_type_is("application/json", "application/json"));
    CHECK(rpc_content_type_is("Application/JSON; charset=utf-8", "application/json"));
    CHECK(rpc_content_type_is("application/connect+json;x", "application/connect+json"));
    CHECK(!rpc_content_type_is("application/jsonx", "application/json"));
    CHECK(!rpc_content_type_is("application/json ; charset=utf-8", "application/json"));
    CHECK(!rpc_content_type_is("application/connect+json", "application/json"));
    CHECK(!rpc_content_type_is("application/js", "application/json"));
    CHECK(!rpc_content_type_is("", "application/json") &&
          !rpc_content_type_is(NULL, "application/json"));
}

void test_connect(int *total_passed, int *total_failed)
{
    test_content_types();
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        long long deadline = -1;
        int ka = -1;
        rpc_call_headers_parse(rows[i].timeout, rows[i].keepalive, rows[i].now, &deadline, &ka);
        int ok = deadline == rows[i].deadline && ka == rows[i].keepalive_ms;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  call headers row %zu: deadline %lld, keepalive %d\n", i, deadline,
                    ka);
    }
    *total_passed += passed;
    *total_failed += failed;
}
