/* Unit tests of handlers/metrics_ids_parse.c: the sandbox_ids of E2B's GET
 * /sandboxes/metrics, each refusal's exact message and the ids a good list
 * gives. */
#include "check.h"
#include "metrics_ids_parse.h"

#include <stdio.h>
#include <string.h>

void unit_metrics_ids(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define A "0123456789abcdef0123456789abcdef"
#define B "fedcba9876543210fedcba9876543210"

struct row {
    const char *text;
    int n;               /* the count, or -1 */
    const char *message; /* when refused: exact */
};

static const struct row rows[] = {
    {A, 1, NULL},
    {A "," B, 2, NULL},
    {"," A ",," B ",", 2, NULL}, /* empty items skipped */
    {"", -1, "sandbox_ids: required, a comma-separated list of sandbox ids"},
    {",,", -1, "sandbox_ids: required, a comma-separated list of sandbox ids"},
    {A ",nope", -1, "sandbox_ids: 'nope' is not a sandbox id"},
    {A "0", -1, "sandbox_ids: '" A "0' is not a sandbox id"},
    {A "," B "," A, -1, "sandbox_ids: " A " is listed twice"},
};

static void test_rows(void)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char text[256], err[128] = "", ids[METRICS_IDS_MAX][SANDBOX_ID_MAX];
        int n, ok;

        snprintf(text, sizeof(text), "%s", rows[i].text);
        n = metrics_ids_parse(text, ids, err, sizeof(err));
        ok = n == rows[i].n && (n > 0 ? strcmp(ids[0], A) == 0 && (n < 2 || !strcmp(ids[1], B))
                                      : strcmp(err, rows[i].message) == 0);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  metrics ids row %zu: %d \"%s\"\n", i, n, err);
    }
}

/* count distinct ids, comma-separated, into text. */
static void id_list(char *text, size_t len, int count)
{
    size_t used = 0;

    for (int i = 0; i < count; i++)
        used += (size_t)snprintf(text + used, len - used, "%s%032x", i ? "," : "", i);
}

/* METRICS_IDS_MAX distinct ids, and one more. */
static void test_max(void)
{
    static char text[(METRICS_IDS_MAX + 1) * SANDBOX_ID_MAX + 1];
    static char ids[METRICS_IDS_MAX][SANDBOX_ID_MAX];
    char err[128] = "";

    id_list(text, sizeof(text), METRICS_IDS_MAX + 1);
    CHECK(metrics_ids_parse(text, ids, err, sizeof(err)) == -1 &&
          strcmp(err, "sandbox_ids: at most 100 ids") == 0);
    id_list(text, sizeof(text), METRICS_IDS_MAX);
    CHECK(metrics_ids_parse(text, ids, err, sizeof(err)) == METRICS_IDS_MAX &&
          strcmp(ids[99], "00000000000000000000000000000063") == 0);
}

void unit_metrics_ids(int *total_passed, int *total_failed)
{
    test_rows();
    test_max();
    *total_passed += passed;
    *total_failed += failed;
}
