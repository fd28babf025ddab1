/* Unit tests of handlers/query_int_parse.c and handlers/logs_query_parse.c:
 * the query of E2B's GET /sandboxes/{id}/logs and /v2/sandboxes/{id}/logs,
 * each refusal's exact message (checked in the route's order) and the values
 * a good query gives, defaults included. */
#include "check.h"
#include "logs_query_parse.h"
#include "query_int_parse.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

void unit_logs_query(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define LL_MAX "9223372036854775807"

struct v1_row {
    const char *query;
    long long start, limit;
    const char *message; /* when refused: exact */
};

static const struct v1_row v1_rows[] = {
    {"", 0, 1000, NULL},
    {"start=5&limit=10", 5, 10, NULL},
    {"limit=0&start=" LL_MAX, LLONG_MAX, 0, NULL},
    {"limit=2147483647", 0, 2147483647LL, NULL},
    {"start=-1", 0, 0, "start: must be an integer in [0, " LL_MAX "]"},
    {"start=", 0, 0, "start: must be an integer in [0, " LL_MAX "]"},
    {"start", 0, 0, "start: must be an integer in [0, " LL_MAX "]"},
    {"start=1x", 0, 0, "start: must be an integer in [0, " LL_MAX "]"},
    {"start=%zz", 0, 0, "start: must be an integer in [0, " LL_MAX "]"},
    {"start=99999999999999999999", 0, 0, "start: must be an integer in [0, " LL_MAX "]"},
    {"limit=99999999999999999999", 0, 0, "limit: must be an integer in [0, 2147483647]"},
    {"limit=2147483648", 0, 0, "limit: must be an integer in [0, 2147483647]"},
    {"start=1&limit=x", 0, 0, "limit: must be an integer in [0, 2147483647]"},
    {"limit=x&start=x", 0, 0, "start: must be an integer in [0, " LL_MAX "]"},
};

static void test_v1(void)
{
    for (size_t i = 0; i < sizeof(v1_rows) / sizeof(v1_rows[0]); i++) {
        const struct v1_row *r = &v1_rows[i];
        struct request req = {.query = r->query};
        struct logs_v1_query q;
        char err[128] = "";
        int rc = logs_v1_query_parse(&req, &q, err, sizeof(err));
        int ok = r->message ? rc == -1 && strcmp(err, r->message) == 0
                            : rc == 0 && q.start == r->start && q.limit == r->limit;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  logs v1 row %zu: %d \"%s\"\n", i, rc, err);
    }
}

struct v2_row {
    const char *query;
    int backward, min_level;
    const char *search;
    long long cursor, limit;
    const char *message; /* when refused: exact */
};

static const struct v2_row v2_rows[] = {
    {"", 0, 0, "", 0, 1000, NULL},
    {"direction=backward", 1, 0, "", LLONG_MAX, 1000, NULL},
    {"direction=backward&cursor=5", 1, 0, "", 5, 1000, NULL},
    {"direction=forward&cursor=7&limit=3&level=warn&search=boot%20ok", 0, 2, "boot ok", 7, 3, NULL},
    {"level=error&search=", 0, 3, "", 0, 1000, NULL},
    {"level=debug&limit=0", 0, 0, "", 0, 0, NULL},
    {"direction=up", 0, 0, NULL, 0, 0, "direction: must be forward or backward"},
    {"direction=", 0, 0, NULL, 0, 0, "direction: must be forward or backward"},
    {"direction=Backward", 0, 0, NULL, 0, 0, "direction: must be forward or backward"},
    {"direction=%zz", 0, 0, NULL, 0, 0, "direction: must be forward or backward"},
    {"level=loud&direction=up", 0, 0, NULL, 0, 0, "direction: must be forward or backward"},
    {"level=loud", 0, 0, NULL, 0, 0, "level: must be one of debug, info, warn, error"},
    {"level=", 0, 0, NULL, 0, 0, "level: must be one of debug, info, warn, error"},
    {"level=INFO", 0, 0, NULL, 0, 0, "level: must be one of debug, info, warn, error"},
    {"level=%zz&search=%zz", 0, 0, NULL, 0, 0, "level: must be one of debug, info, warn, error"},
    {"search=%zz&cursor=x", 0, 0, NULL, 0, 0, "search: must be at most 256 bytes"},
    {"cursor=-1", 0, 0, NULL, 0, 0, "cursor: must be an integer in [0, " LL_MAX "]"},
    {"cursor=x&limit=x", 0, 0, NULL, 0, 0, "cursor: must be an integer in [0, " LL_MAX "]"},
    {"limit=1001", 0, 0, NULL, 0, 0, "limit: must be an integer in [0, 1000]"},
    {"limit=-1", 0, 0, NULL, 0, 0, "limit: must be an integer in [0, 1000]"},
};

static int v2_same(const struct v2_row *r, const struct logs_v2_query *q)
{
    return q->backward == r->backward && q->min_level == r->min_level &&
           strcmp(q->search, r->search) == 0 && q->cursor == r->cursor && q->limit == r->limit;
}

static void test_v2(void)
{
    for (size_t i = 0; i < sizeof(v2_rows) / sizeof(v2_rows[0]); i++) {
        const struct v2_row *r = &v2_rows[i];
        struct request req = {.query = r->query};
        struct logs_v2_query q;
        char err[128] = "";
        int rc = logs_v2_query_parse(&req, &q, err, sizeof(err));
        int ok = r->message ? rc == -1 && strcmp(err, r->message) == 0 : rc == 0 && v2_same(r, &q);

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  logs v2 row %zu: %d \"%s\"\n", i, rc, err);
    }
}

/* search holds LOGS_SEARCH_MAX bytes; one more is refused. */
static void test_search_max(void)
{
    char query[LOGS_SEARCH_MAX + 16], err[128] = "";
    struct logs_v2_query q;
    struct request req = {.query = query};

    snprintf(query, sizeof(query), "search=%0*d", LOGS_SEARCH_MAX, 0);
    CHECK(logs_v2_query_parse(&req, &q, err, sizeof(err)) == 0 &&
          strlen(q.search) == LOGS_SEARCH_MAX);
    snprintf(query, sizeof(query), "search=%0*d", LOGS_SEARCH_MAX + 1, 0);
    CHECK(logs_v2_query_parse(&req, &q, err, sizeof(err)) == -1 &&
          strcmp(err, "search: must be at most 256 bytes") == 0);
}

/* A refusal leaves *out as it was. */
static void test_query_int(void)
{
    struct request req = {.query = "n=12&m=13"};
    long long v = 42;
    char err[128] = "";

    CHECK(query_int_parse(&req, "n", 0, 12, 1, &v, err, sizeof(err)) == 0 && v == 12);
    CHECK(query_int_parse(&req, "x", 0, 12, 1, &v, err, sizeof(err)) == 0 && v == 1);
    v = 42;
    CHECK(query_int_parse(&req, "m", -5, 12, 1, &v, err, sizeof(err)) == -1 && v == 42 &&
          strcmp(err, "m: must be an integer in [-5, 12]") == 0);
}

void unit_logs_query(int *total_passed, int *total_failed)
{
    test_v1();
    test_v2();
    test_search_max();
    test_query_int();
    *total_passed += passed;
    *total_failed += failed;
}
