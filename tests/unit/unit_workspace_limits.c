/* Unit tests of handlers/workspace_limits_parse.c: PATCH /v1/workspace's
 * body, each refusal's exact message (an unknown or read-only field, a value
 * not an integer, out of range, above the operator's ceiling) and the limits
 * a good body sets. */
#include "check.h"
#include "workspace_limits_parse.h"

#include <string.h>

void unit_workspace_limits(int *total_passed, int *total_failed);

CHECK_COUNTERS;

static const long ceilings[WS_LIMIT_COUNT] = {100, 4096, 20480, 600};

struct row {
    const char *body;
    const char *message; /* exact */
};

static const struct row bads[] = {
    {"{\"name\":\"x\"}", "name: unknown or read-only field"},
    {"{\"ceilings\":{}}", "ceilings: unknown or read-only field"},
    {"{\"sandbox_pids_limit\":1024,\"active_sandboxes\":1}",
     "active_sandboxes: unknown or read-only field"},
    {"{\"max_concurrent_sandboxes\":\"5\"}",
     "max_concurrent_sandboxes: must be an integer in [0, 100000]"},
    {"{\"sandbox_pids_limit\":100.5}", "sandbox_pids_limit: must be an integer in [64, 65536]"},
    {"{\"sandbox_disk_mb\":null}", "sandbox_disk_mb: must be an integer in [256, 1048576]"},
    {"{\"sandbox_pids_limit\":63}", "sandbox_pids_limit: must be an integer in [64, 65536]"},
    {"{\"max_concurrent_sandboxes\":101}",
     "max_concurrent_sandboxes: 101 is above this installation's ceiling of 100 (corral.conf "
     "ceiling_max_concurrent_sandboxes)"},
    {"{\"sandbox_timeout_s\":601}",
     "sandbox_timeout_s: 601 is above this installation's ceiling of 600 (corral.conf "
     "sandbox_max_timeout_s)"},
};

static void test_refusals(void)
{
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        long limits[WS_LIMIT_COUNT] = {0};
        int set[WS_LIMIT_COUNT] = {0};
        char err[200] = "";
        json_t *b = json_loads(bads[i].body, 0, NULL);
        int rc = workspace_limits_parse(b, ceilings, limits, set, err, sizeof(err));
        int ok = rc == -1 && strcmp(err, bads[i].message) == 0;

        CHECK(b != NULL && ok);
        if (!ok)
            fprintf(stderr, "  workspace row %zu: %d \"%s\"\n", i, rc, err);
        json_decref(b);
    }
}

static void test_good(void)
{
    long limits[WS_LIMIT_COUNT] = {0};
    int set[WS_LIMIT_COUNT] = {0};
    char err[200] = "";
    json_t *b = json_loads("{\"max_concurrent_sandboxes\":0,\"sandbox_disk_mb\":20480}", 0, NULL);

    CHECK(workspace_limits_parse(b, ceilings, limits, set, err, sizeof(err)) == 0);
    CHECK(set[WS_LIMIT_MAX_CONCURRENT] && limits[WS_LIMIT_MAX_CONCURRENT] == 0 &&
          set[WS_LIMIT_DISK_MB] && limits[WS_LIMIT_DISK_MB] == 20480);
    CHECK(!set[WS_LIMIT_PIDS] && !set[WS_LIMIT_TIMEOUT]);
    json_decref(b);
    b = json_object();
    memset(set, 0, sizeof(set));
    CHECK(workspace_limits_parse(b, ceilings, limits, set, err, sizeof(err)) == 0 && !set[0] &&
          !set[1] && !set[2] && !set[3]);
    json_decref(b);
}

void unit_workspace_limits(int *total_passed, int *total_failed)
{
    test_refusals();
    test_good();
    *total_passed += passed;
    *total_failed += failed;
}
