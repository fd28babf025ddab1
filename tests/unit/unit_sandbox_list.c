/* Unit tests of handlers/sandbox_list_parse.c: the query of the native GET
 * /v1/sandboxes (state and metadata, the refusal's exact message) and the
 * metadata filter both lists apply. */
#include "check.h"
#include "sandbox_list_parse.h"

#include <string.h>

void unit_sandbox_list(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define STATE_RULE                                                                                 \
    "state: must be one of pending, running, pausing, paused, resuming, exited, lost, error"

struct row {
    const char *query;
    enum sandbox_state wanted;
    const char *metadata;
    const char *message; /* when refused: exact */
};

static const struct row rows[] = {
    {"", SANDBOX_STATE_ANY, "", NULL},
    {"state=running", SANDBOX_STATE_RUNNING, "", NULL},
    {"state=paused&metadata=app%3Dweb%26env%3Dprod", SANDBOX_STATE_PAUSED, "app=web&env=prod",
     NULL},
    {"state=", SANDBOX_STATE_ANY, "", NULL},
    {"state=%zz", SANDBOX_STATE_ANY, "", NULL}, /* nothing decoded: no filter */
    {"state=Running", SANDBOX_STATE_UNKNOWN, NULL, STATE_RULE},
    /* one state at a time: a list was let through and listed nothing */
    {"state=pending,running", SANDBOX_STATE_UNKNOWN, NULL, STATE_RULE},
    {"state=gone&metadata=a%3Db", SANDBOX_STATE_UNKNOWN, NULL, STATE_RULE},
    {"state=run%zz", SANDBOX_STATE_UNKNOWN, NULL, STATE_RULE}, /* "run" decoded */
};

static void test_query(void)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];
        struct request req = {.query = r->query};
        struct sandbox_list_query q;
        char err[128] = "";
        int rc = sandbox_list_query_parse(&req, &q, err, sizeof(err));
        int ok = r->message
                     ? rc == -1 && strcmp(err, r->message) == 0
                     : rc == 0 && q.wanted == r->wanted && strcmp(q.metadata, r->metadata) == 0;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  sandbox list row %zu: %d \"%s\"\n", i, rc, err);
    }
}

static void test_metadata_matches(void)
{
    json_t *meta =
        json_loads("{\"app\":\"web\",\"env\":\"prod\",\"a b\":\"c&d\",\"n\":1}", 0, NULL);

    CHECK(metadata_matches(meta, ""));
    CHECK(metadata_matches(meta, "app=web"));
    CHECK(metadata_matches(meta, "app=web&env=prod"));
    CHECK(metadata_matches(meta, "&app=web&&"));
    CHECK(metadata_matches(meta, "a+b=c%26d")); /* pairs decoded after the split */
    CHECK(!metadata_matches(meta, "app=api"));
    CHECK(!metadata_matches(meta, "app=web&env=dev"));
    CHECK(!metadata_matches(meta, "missing=x"));
    CHECK(!metadata_matches(meta, "n=1")); /* only string values match */
    CHECK(!metadata_matches(meta, "app"));
    CHECK(!metadata_matches(meta, "app=%zz"));
    CHECK(!metadata_matches(NULL, "app=web"));
    json_decref(meta);
}

void unit_sandbox_list(int *total_passed, int *total_failed)
{
    test_query();
    test_metadata_matches();
    *total_passed += passed;
    *total_failed += failed;
}
