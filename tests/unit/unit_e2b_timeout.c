/* Unit tests of handlers/e2b_timeout_parse.c: the bodies of E2B's timeout
 * (timeout required), connect and resume (timeout optional, memory flag
 * checked first) and refreshes (duration), each refusal's exact message and
 * the values a good body gives. */
#include "check.h"
#include "e2b_timeout_parse.h"

#include <string.h>

void unit_e2b_timeout(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define MAX 3600
#define RULE "timeout: must be an integer number of seconds in [0, 3600] (the operator's maximum)"
#define MEMORY_RULE "memory: must be true or false"

struct row {
    const char *body;
    int required, with_memory;
    long timeout;        /* -2: absent; -1: refused */
    int keep_memory;     /* with_memory and accepted */
    const char *message; /* when refused: exact */
};

static const struct row rows[] = {
    /* POST /sandboxes/{id}/timeout */
    {"{\"timeout\":60}", 1, 0, 60, 0, NULL},
    {"{\"timeout\":0}", 1, 0, 0, 0, NULL},
    {"{\"timeout\":3600}", 1, 0, 3600, 0, NULL},
    {"{}", 1, 0, -1, 0, RULE},
    {"{\"timeout\":3601}", 1, 0, -1, 0, RULE},
    {"{\"timeout\":-1}", 1, 0, -1, 0, RULE},
    {"{\"timeout\":\"60\"}", 1, 0, -1, 0, RULE},
    {"{\"timeout\":60.0}", 1, 0, -1, 0, RULE},
    {"{\"timeout\":null}", 1, 0, -1, 0, RULE},
    {"{\"timeout\":60,\"memory\":1}", 1, 0, 60, 0, NULL}, /* memory is not read here */
    /* connect and resume */
    {"{}", 0, 1, -2, 1, NULL},
    {"{\"timeout\":30}", 0, 1, 30, 1, NULL},
    {"{\"memory\":false}", 0, 1, -2, 0, NULL},
    {"{\"memory\":true,\"timeout\":5}", 0, 1, 5, 1, NULL},
    {"{\"memory\":null}", 0, 1, -2, 1, NULL},
    {"{\"timeout\":null}", 0, 1, -1, 0, RULE},
    {"{\"timeout\":4000}", 0, 1, -1, 0, RULE},
    {"{\"memory\":\"no\"}", 0, 1, -1, 0, MEMORY_RULE},
    {"{\"memory\":0,\"timeout\":-5}", 0, 1, -1, 0, MEMORY_RULE},
    {"{\"timeout\":7}", 0, 0, 7, 0, NULL},
};

static void test_rows(void)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];
        json_t *b = json_loads(r->body, 0, NULL);
        int keep = -9;
        char err[160] = "";
        long t = b ? e2b_timeout_parse(b, r->required, MAX, r->with_memory ? &keep : NULL, err,
                                       sizeof(err))
                   : -3;
        int ok = t == r->timeout && (r->message ? strcmp(err, r->message) == 0
                                                : !r->with_memory || keep == r->keep_memory);

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  e2b timeout row %zu: %ld keep %d \"%s\"\n", i, t, keep, err);
        json_decref(b);
    }
}

static void test_flag(void)
{
    json_t *b = json_loads("{\"a\":true,\"b\":false,\"c\":null,\"d\":\"true\"}", 0, NULL);
    char err[128] = "";

    CHECK(e2b_flag_parse(b, "a", err, sizeof(err)) == 1);
    CHECK(e2b_flag_parse(b, "b", err, sizeof(err)) == 0);
    CHECK(e2b_flag_parse(b, "c", err, sizeof(err)) == 1);
    CHECK(e2b_flag_parse(b, "absent", err, sizeof(err)) == 1 && err[0] == '\0');
    CHECK(e2b_flag_parse(b, "d", err, sizeof(err)) == -1 &&
          strcmp(err, "d: must be true or false") == 0);
    json_decref(b);
}

/* POST /sandboxes/{id}/refreshes: absent is 0, the caller caps the rest. */
static void test_refresh(void)
{
    static const struct {
        const char *body;
        long duration; /* -1: refused */
    } refreshes[] = {
        {"{}", 0},
        {"{\"duration\":0}", 0},
        {"{\"duration\":3600}", 3600},
        {"{\"duration\":3601}", -1},
        {"{\"duration\":-1}", -1},
        {"{\"duration\":null}", -1},
        {"{\"duration\":\"60\"}", -1},
        {"{\"duration\":60.5}", -1},
    };

    for (size_t i = 0; i < sizeof(refreshes) / sizeof(refreshes[0]); i++) {
        json_t *b = json_loads(refreshes[i].body, 0, NULL);
        char err[128] = "";
        long d = b ? e2b_refresh_parse(b, err, sizeof(err)) : -3;
        int ok = d == refreshes[i].duration &&
                 (d >= 0 || strcmp(err, "duration: must be an integer number of seconds in "
                                        "[0, 3600]") == 0);

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  refresh row %zu: %ld \"%s\"\n", i, d, err);
        json_decref(b);
    }
}

void unit_e2b_timeout(int *total_passed, int *total_failed)
{
    test_rows();
    test_flag();
    test_refresh();
    *total_passed += passed;
    *total_failed += failed;
}
