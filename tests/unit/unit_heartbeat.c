/* Unit tests of handlers/heartbeat_parse.c: POST /v1/worker/heartbeat's body,
 * every refusal's exact message (acks, sandboxes, killed, problem,
 * snapshots), and the bodies a worker sends accepted. */
#include "check.h"
#include "heartbeat_parse.h"

#include <stdlib.h>
#include <string.h>

void unit_heartbeat(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define SB "0123456789abcdef0123456789abcdef"
#define SNAP "snap-0123456789abcdef0123"

struct row {
    const char *body;
    const char *message; /* NULL: accepted */
};

#define SBS_MSG(i) "sandboxes[" #i "]: needs an id and a state (running, paused, exited, failed)"
#define WARM_MSG(i) "warm[" #i "]: needs a template, a runtime, a size and a ready count (0-16)"
#define SNAP_MSG(i)                                                                                \
    "snapshots[" #i "]: needs a snapshot id, a workspace and a state (ready, failed)"

static const struct row rows[] = {
    {"{}", NULL},
    {"{\"acks\":[\"1700000000000-0\",\"1-15\"],\"sandboxes\":[{\"id\":\"" SB
     "\",\"state\":\"running\"},{\"id\":\"" SB "\",\"state\":\"failed\"}],\"killed\":[\"" SB
     "\"],\"problem\":\"\",\"snapshots\":[{\"id\":\"" SNAP "\",\"workspace\":\"\",\"state\":"
     "\"ready\"},{\"id\":\"" SNAP "\",\"workspace\":\"" SB "\",\"state\":\"failed\"}],"
     "\"full\":true,\"resume\":true,\"wait\":false}",
     NULL},
    {"{\"acks\":{}}", "acks and sandboxes: must be arrays"},
    {"{\"sandboxes\":\"x\"}", "acks and sandboxes: must be arrays"},
    {"{\"killed\":{}}", "killed: must be an array of at most 1000"},
    {"{\"killed\":[\"" SB "\",\"nope\"]}", "killed[1]: not a sandbox id"},
    {"{\"killed\":[5]}", "killed[0]: not a sandbox id"},
    {"{\"problem\":5}", "problem: must be a string of at most 255 bytes"},
    {"{\"acks\":[\"1-0\",\"x\"]}", "acks[1]: not a command id"},
    {"{\"acks\":[\"1-\"]}", "acks[0]: not a command id"},
    {"{\"acks\":[\"-1\"]}", "acks[0]: not a command id"},
    {"{\"acks\":[\"1-0-0\"]}", "acks[0]: not a command id"},
    {"{\"acks\":[\"123456789012345678901234-0\"]}", "acks[0]: not a command id"},
    {"{\"acks\":[1]}", "acks[0]: not a command id"},
    {"{\"sandboxes\":[{\"id\":\"" SB "\",\"state\":\"gone\"}]}", SBS_MSG(0)},
    {"{\"sandboxes\":[{\"id\":\"" SB "\"}]}", SBS_MSG(0)},
    {"{\"sandboxes\":[{\"state\":\"running\"}]}", SBS_MSG(0)},
    {"{\"sandboxes\":[7]}", SBS_MSG(0)},
    {"{\"snapshots\":{}}", "snapshots: must be an array of at most 1000"},
    {"{\"snapshots\":[{\"id\":\"snap-xyz\",\"workspace\":\"\",\"state\":\"ready\"}]}", SNAP_MSG(0)},
    {"{\"snapshots\":[{\"id\":\"" SNAP "\",\"state\":\"ready\"}]}", SNAP_MSG(0)},
    {"{\"snapshots\":[{\"id\":\"" SNAP "\",\"workspace\":\"WS\",\"state\":\"ready\"}]}",
     SNAP_MSG(0)},
    {"{\"snapshots\":[{\"id\":\"" SNAP "\",\"workspace\":\"\",\"state\":\"done\"}]}", SNAP_MSG(0)},
    {"{\"warm\":[{\"template\":\"base\",\"runtime\":\"runc\",\"size\":2,\"ready\":0}]}", NULL},
    {"{\"warm\":[]}", NULL},
    {"{\"warm\":{}}", "warm: must be an array of at most 8"},
    {"{\"warm\":[{\"template\":\"Base\",\"runtime\":\"runc\",\"size\":2,\"ready\":0}]}",
     WARM_MSG(0)},
    {"{\"warm\":[{\"template\":\"base\",\"size\":2,\"ready\":0}]}", WARM_MSG(0)},
    {"{\"warm\":[{\"template\":\"base\",\"runtime\":\"runc\",\"size\":17,\"ready\":0}]}",
     WARM_MSG(0)},
    {"{\"warm\":[{\"template\":\"base\",\"runtime\":\"runc\",\"size\":2,\"ready\":-1}]}",
     WARM_MSG(0)},
    {"{\"warm\":[{\"template\":\"base\",\"runtime\":\"runc\",\"size\":2,\"ready\":0},7]}",
     WARM_MSG(1)},
    /* the order the checks run in: arrays, killed, problem, acks, sandboxes, snapshots */
    {"{\"killed\":[1],\"problem\":5}", "killed[0]: not a sandbox id"},
    {"{\"acks\":[1],\"sandboxes\":[1],\"snapshots\":[1]}", "acks[0]: not a command id"},
    {"{\"sandboxes\":[1],\"snapshots\":[1]}", SBS_MSG(0)},
};

static void test_rows(void)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char err[256] = "";
        const char *want = rows[i].message;
        json_t *b = json_loads(rows[i].body, 0, NULL);
        int rc = heartbeat_body_check(b, err, sizeof(err));
        int ok = want ? rc == -1 && strcmp(err, want) == 0 : rc == 0;

        CHECK(b != NULL && ok);
        if (!ok)
            fprintf(stderr, "  heartbeat row %zu: %d \"%s\"\n", i, rc, err);
        json_decref(b);
    }
}

/* What placement reads of the warm pools: only those with a sandbox ready. */
static void test_warm_ready(void)
{
    char out[HEARTBEAT_WARM_READY_LEN];
    json_t *w = json_loads("[{\"template\":\"base\",\"runtime\":\"runc\",\"size\":2,\"ready\":1},"
                           "{\"template\":\"py\",\"runtime\":\"runsc\",\"size\":2,\"ready\":0},"
                           "{\"template\":\"py\",\"runtime\":\"runc\",\"size\":3,\"ready\":3}]",
                           0, NULL);

    heartbeat_warm_ready(w, out);
    CHECK(strcmp(out, ",base:runc,py:runc,") == 0);
    heartbeat_warm_ready(NULL, out);
    CHECK(strcmp(out, ",") == 0);
    json_decref(w);
}

/* The batch limits: 1000 acks and killed, 1000 snapshots, a 255-byte problem. */
static void test_limits(void)
{
    char err[256], problem[257];
    json_t *b = json_object(), *acks = json_array(), *killed = json_array(), *snaps = json_array();

    for (int i = 0; i < HEARTBEAT_MAX_BATCH; i++) {
        json_array_append_new(acks, json_string("1-0"));
        json_array_append_new(killed, json_string(SB));
        json_array_append_new(
            snaps, json_pack("{s:s, s:s, s:s}", "id", SNAP, "workspace", "", "state", "ready"));
    }
    memset(problem, 'p', 255);
    problem[255] = '\0';
    json_object_set(b, "acks", acks);
    json_object_set(b, "killed", killed);
    json_object_set(b, "snapshots", snaps);
    json_object_set_new(b, "problem", json_string(problem));
    CHECK(heartbeat_body_check(b, err, sizeof(err)) == 0);
    problem[255] = 'p';
    problem[256] = '\0';
    json_object_set_new(b, "problem", json_string(problem));
    CHECK(heartbeat_body_check(b, err, sizeof(err)) == -1 &&
          strcmp(err, "problem: must be a string of at most 255 bytes") == 0);
    json_object_del(b, "problem");
    json_array_append_new(
        snaps, json_pack("{s:s, s:s, s:s}", "id", SNAP, "workspace", "", "state", "ready"));
    CHECK(heartbeat_body_check(b, err, sizeof(err)) == -1 &&
          strcmp(err, "snapshots: must be an array of at most 1000") == 0);
    json_array_append_new(killed, json_string(SB));
    CHECK(heartbeat_body_check(b, err, sizeof(err)) == -1 &&
          strcmp(err, "killed: must be an array of at most 1000") == 0);
    json_array_append_new(acks, json_string("1-0"));
    CHECK(heartbeat_body_check(b, err, sizeof(err)) == -1 &&
          strcmp(err, "acks and sandboxes: must be arrays") == 0);
    json_decref(acks);
    json_decref(killed);
    json_decref(snaps);
    json_decref(b);
}

void unit_heartbeat(int *total_passed, int *total_failed)
{
    test_rows();
    test_limits();
    test_warm_ready();
    *total_passed += passed;
    *total_failed += failed;
}
