/* Unit tests of handlers/snapshot_parse.c: a snapshot create's name, a fork's
 * count and timeout, and the snapshot list's query on both surfaces, each
 * refusal's exact message and the values a good input gives. */
#include "check.h"
#include "sandbox_store.h"
#include "snapshot_parse.h"

#include <stdio.h>
#include <string.h>

void unit_snapshot_parse(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define NAME_RULE "name: must be a string of 1-128 characters"
#define FORK_RULE "count: 1-10 forks; timeout: 1-86400 seconds"
#define LIMIT_RULE "limit: must be an integer in [1, 100]"

struct name_row {
    const char *body;
    const char *name;    /* when accepted */
    const char *message; /* when refused: exact */
};

static const struct name_row name_rows[] = {
    {"{}", "", NULL},
    {"{\"name\":null}", "", NULL},
    {"{\"name\":\"nightly\"}", "nightly", NULL},
    {"{\"name\":\"\"}", NULL, NAME_RULE},
    {"{\"name\":5}", NULL, NAME_RULE},
    {"{\"name\":[\"a\"]}", NULL, NAME_RULE},
};

static void test_name(void)
{
    char body[200], err[128];
    char name[SNAPSHOT_NAME_MAX + 1];
    json_t *b;

    for (size_t i = 0; i < sizeof(name_rows) / sizeof(name_rows[0]); i++) {
        const struct name_row *r = &name_rows[i];
        int rc, ok;

        b = json_loads(r->body, 0, NULL);
        err[0] = '\0';
        rc = b ? snapshot_name_parse(b, name, err, sizeof(err)) : -2;
        ok = r->message ? rc == -1 && strcmp(err, r->message) == 0 && name[0] == '\0'
                        : rc == 0 && strcmp(name, r->name) == 0;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  snapshot name row %zu: %d \"%s\"\n", i, rc, err);
        json_decref(b);
    }
    /* SNAPSHOT_NAME_MAX characters are kept whole; one more is refused. */
    snprintf(body, sizeof(body), "{\"name\":\"%0*d\"}", SNAPSHOT_NAME_MAX, 0);
    b = json_loads(body, 0, NULL);
    CHECK(snapshot_name_parse(b, name, err, sizeof(err)) == 0 && strlen(name) == SNAPSHOT_NAME_MAX);
    json_decref(b);
    snprintf(body, sizeof(body), "{\"name\":\"%0*d\"}", SNAPSHOT_NAME_MAX + 1, 0);
    b = json_loads(body, 0, NULL);
    CHECK(snapshot_name_parse(b, name, err, sizeof(err)) == -1 && strcmp(err, NAME_RULE) == 0);
    json_decref(b);
}

struct fork_row {
    const char *body;
    long count, timeout_s; /* when accepted; refused (FORK_RULE) when count is 0 */
};

static const struct fork_row fork_rows[] = {
    {"{}", 1, SANDBOX_DEFAULT_TIMEOUT_S},
    {"{\"count\":null,\"timeout\":null}", 1, SANDBOX_DEFAULT_TIMEOUT_S},
    {"{\"count\":10,\"timeout\":86400}", 10, 86400},
    {"{\"count\":1,\"timeout\":1}", 1, 1},
    {"{\"count\":0}", 0, 0},
    {"{\"count\":11}", 0, 0},
    {"{\"count\":\"2\"}", 0, 0},
    {"{\"count\":2.0}", 0, 0},
    {"{\"timeout\":0}", 0, 0},
    {"{\"timeout\":86401}", 0, 0},
    {"{\"count\":2,\"timeout\":\"60\"}", 0, 0},
};

static void test_fork(void)
{
    for (size_t i = 0; i < sizeof(fork_rows) / sizeof(fork_rows[0]); i++) {
        const struct fork_row *r = &fork_rows[i];
        json_t *b = json_loads(r->body, 0, NULL);
        long count = -1, timeout_s = -1;
        char err[128] = "";
        int rc = b ? snapshot_fork_parse(b, &count, &timeout_s, err, sizeof(err)) : -2;
        int ok = r->count ? rc == 0 && count == r->count && timeout_s == r->timeout_s
                          : rc == -1 && strcmp(err, FORK_RULE) == 0;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  fork row %zu: %d \"%s\"\n", i, rc, err);
        json_decref(b);
    }
}

struct list_row {
    const char *query;
    int e2b;
    const char *sandbox, *name, *after;
    size_t limit;        /* when accepted */
    const char *message; /* when refused: exact */
};

static const struct list_row list_rows[] = {
    {"", 1, "", "", "", 100, NULL},
    {"sandboxID=sb1&name=n%20x&nextToken=snap1&limit=5", 1, "sb1", "n x", "snap1", 5, NULL},
    {"sandbox_id=sb1&cursor=snap1&limit=100", 0, "sb1", "", "snap1", 100, NULL},
    /* each surface reads only its own names */
    {"sandbox_id=sb1&cursor=snap1", 1, "", "", "", 100, NULL},
    {"sandboxID=sb1&nextToken=snap1", 0, "", "", "", 100, NULL},
    {"limit=", 0, "", "", "", 100, NULL},
    {"limit=%zz", 0, "", "", "", 100, NULL}, /* nothing decoded: the default */
    {"limit=0", 0, NULL, NULL, NULL, 0, LIMIT_RULE},
    {"limit=101", 1, NULL, NULL, NULL, 0, LIMIT_RULE},
    {"limit=-1", 1, NULL, NULL, NULL, 0, LIMIT_RULE},
    {"limit=+5", 1, NULL, NULL, NULL, 0, LIMIT_RULE},
    {"limit=5x", 0, NULL, NULL, NULL, 0, LIMIT_RULE},
    {"limit=99999999999999999999", 0, NULL, NULL, NULL, 0, LIMIT_RULE},
};

static int list_same(const struct list_row *r, const struct snapshot_list_query *q)
{
    return strcmp(q->sandbox, r->sandbox) == 0 && strcmp(q->name, r->name) == 0 &&
           strcmp(q->after, r->after) == 0 && q->limit == r->limit;
}

static void test_list(void)
{
    for (size_t i = 0; i < sizeof(list_rows) / sizeof(list_rows[0]); i++) {
        const struct list_row *r = &list_rows[i];
        struct request req = {.query = r->query};
        struct snapshot_list_query q;
        char err[128] = "";
        int rc = snapshot_list_query_parse(&req, r->e2b, &q, err, sizeof(err));
        int ok =
            r->message ? rc == -1 && strcmp(err, r->message) == 0 : rc == 0 && list_same(r, &q);

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  snapshot list row %zu: %d \"%s\"\n", i, rc, err);
    }
}

void unit_snapshot_parse(int *total_passed, int *total_failed)
{
    test_name();
    test_fork();
    test_list();
    *total_passed += passed;
    *total_failed += failed;
}
