/* Unit tests of issue 28's edges: handlers/template_build_parse.c (a build's
 * steps and names), handlers/worker_build_parse.c (a worker's build report)
 * and handlers/upload_token.c (the upload URL's authority), each refusal's
 * message and what a good input gives. */
#include "check.h"
#include "template_build_parse.h"
#include "upload_token.h"
#include "worker_build_parse.h"

#include <stdio.h>
#include <string.h>

void unit_template_build(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define H "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define H2 "f123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct build_row {
    const char *body;
    const char *message; /* NULL: accepted */
};

static const struct build_row build_rows[] = {
    {"{\"fromTemplate\":\"base\"}", NULL},
    {"{\"fromImage\":\"python:3.12\",\"steps\":[{\"type\":\"RUN\",\"args\":[\"true\",\"root\"]}]}",
     NULL},
    {"{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"COPY\",\"args\":[\"a\",\"/b\",\"user\","
     "\"0755\"],\"filesHash\":\"" H "\"},{\"type\":\"ENV\",\"args\":[\"A\",\"1\"]},"
     "{\"type\":\"WORKDIR\",\"args\":[\"/app\"]},{\"type\":\"USER\",\"args\":[\"root\"]}],"
     "\"startCmd\":\"srv\",\"readyCmd\":\"true\",\"force\":true}",
     NULL},
    {"{}", "one of fromTemplate and fromImage is required"},
    {"{\"fromTemplate\":\"base\",\"fromImage\":\"x\"}",
     "one of fromTemplate and fromImage is required"},
    {"{\"fromImage\":\"127.0.0.1:5000/corral/w0/tpl-x:b\"}",
     "fromImage: '127.0.0.1:5000/corral/w0/tpl-x:b' names no template of Corral's registry"},
    {"{\"fromImage\":\"127.0.0.1:5000/corral/w0123456789abcdef/tpl-x@sha256:" H "\"}", NULL},
    {"{\"fromImage\":\"corral-snap:snap-0\"}",
     "fromImage: 'corral-snap:snap-0' is not an image a build may start from (Corral's own "
     "images are named by fromTemplate)"},
    {"{\"fromImage\":\"localhost:5000/app\"}",
     "fromImage: 'localhost:5000/app' is not an image a build may start from (Corral's own "
     "images are named by fromTemplate)"},
    {"{\"fromImage\":\"reg.example:5000/app:1\"}", NULL},
    {"{\"fromTemplate\":\"base\",\"fromImageRegistry\":{\"type\":\"registry\"}}",
     "fromImageRegistry: registry credentials are not supported"},
    {"{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"FROM\",\"args\":[]}]}",
     "steps[0]: type: must be RUN, COPY, ENV, WORKDIR or USER"},
    {"{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"RUN\",\"args\":[\"x\",\"Root!\"]}]}",
     "steps[0]: RUN: the user is not a user name"},
    {"{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"COPY\",\"args\":[\"a\",\"/b\"]}]}",
     "steps[0]: COPY: filesHash must be 64 hex digits"},
    {"{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"COPY\",\"args\":[\"a\",\"/b\",\"\","
     "\"9\"],\"filesHash\":\"" H "\"}]}",
     "steps[0]: COPY: the mode is not octal"},
    {"{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"ENV\",\"args\":[\"A\"]}]}",
     "steps[0]: ENV: args are name, value pairs"},
    {"{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"ENV\",\"args\":[\"1A\",\"x\"]}]}",
     "steps[0]: ENV: a name is not a variable name"},
    {"{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"WORKDIR\",\"args\":[\"rel\"]}]}",
     "steps[0]: WORKDIR: args are [an absolute path]"},
    {"{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"RUN\",\"args\":[\"x\"],\"force\":1}]}",
     "steps[0]: force: must be a boolean"},
    {"{\"fromTemplate\":\"base\",\"steps\":{}}", "steps: must be an array of at most 200 steps"},
    {"{\"fromTemplate\":5}", "fromTemplate: must be a string of at most 128 bytes"},
};

static void test_build(void)
{
    for (size_t i = 0; i < sizeof(build_rows) / sizeof(build_rows[0]); i++) {
        json_t *b = json_loads(build_rows[i].body, 0, NULL);
        struct template_build_req r;
        char err[300] = "";
        int rc = b ? template_build_parse(b, "127.0.0.1:5000", &r, err, sizeof(err)) : -2;
        int ok =
            build_rows[i].message ? rc == -1 && strcmp(err, build_rows[i].message) == 0 : rc == 0;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  build row %zu: %d \"%s\"\n", i, rc, err);
        if (rc == 0)
            json_decref(r.steps);
        json_decref(b);
    }
}

/* The last USER and WORKDIR are the template's; defaults otherwise. */
static void test_build_state(void)
{
    json_t *b = json_loads(build_rows[2].body, 0, NULL);
    struct template_build_req r;
    char err[200];

    CHECK(template_build_parse(b, "", &r, err, sizeof(err)) == 0);
    CHECK(strcmp(r.user, "root") == 0 && strcmp(r.workdir, "/app") == 0 && r.n_copy == 1);
    CHECK(r.force == 1 && strcmp(r.start_cmd, "srv") == 0 && strcmp(r.ready_cmd, "true") == 0);
    CHECK(json_array_size(r.steps) == 4);
    json_decref(r.steps);
    json_decref(b);
    b = json_loads(build_rows[0].body, 0, NULL);
    CHECK(template_build_parse(b, "", &r, err, sizeof(err)) == 0);
    CHECK(strcmp(r.user, "user") == 0 && strcmp(r.workdir, "/home/user") == 0);
    CHECK(strcmp(r.from_template, "base") == 0 && json_array_size(r.steps) == 0);
    json_decref(r.steps);
    json_decref(b);
}

/* A Dockerfile's FROM of Corral's registry names a template, and its workspace. */
static void test_registry_from(void)
{
    json_t *b =
        json_loads("{\"fromImage\":\"reg:5000/corral/w0123456789abcdef/tpl-a:bld-b\"}", 0, NULL);
    struct template_build_req r;
    char err[200];

    CHECK(template_build_parse(b, "reg:5000", &r, err, sizeof(err)) == 0);
    CHECK(r.from_registry && strcmp(r.from_template, "tpl-a") == 0 && !*r.from_image);
    CHECK(strcmp(r.registry_ws, "0123456789abcdef") == 0);
    json_decref(r.steps);
    json_decref(b);
    b = json_loads("{\"fromImage\":\"other:5000/corral/w0123456789abcdef/tpl-a\"}", 0, NULL);
    CHECK(template_build_parse(b, "reg:5000", &r, err, sizeof(err)) == 0 && !r.from_registry);
    json_decref(r.steps);
    json_decref(b);
}

static void test_names(void)
{
    struct template_name_req n;
    char err[200];
    json_t *b = json_loads("{\"name\":\"my-app:v1\",\"tags\":[\"x\"],\"cpuCount\":2}", 0, NULL);

    CHECK(template_name_parse(b, &n, err, sizeof(err)) == 0);
    CHECK(strcmp(n.name, "my-app") == 0 && strcmp(n.tag, "v1") == 0 && n.cpu == 2);
    CHECK(json_array_size(n.tags) == 1);
    json_decref(n.tags);
    json_decref(b);
    b = json_loads("{\"alias\":\"legacy\"}", 0, NULL);
    CHECK(template_name_parse(b, &n, err, sizeof(err)) == 0 && strcmp(n.tag, "default") == 0);
    json_decref(n.tags);
    json_decref(b);
    b = json_loads("{\"name\":\"Bad Name\"}", 0, NULL);
    CHECK(template_name_parse(b, &n, err, sizeof(err)) == -1 && strncmp(err, "name:", 5) == 0);
    json_decref(b);
    b = json_loads("{\"name\":\"ok\",\"memoryMB\":0}", 0, NULL);
    CHECK(template_name_parse(b, &n, err, sizeof(err)) == -1 &&
          strcmp(err, "memoryMB: must be an integer from 1 to 262144") == 0);
    json_decref(b);
    CHECK(template_hash_ok(H) && !template_hash_ok("ABC") && !template_hash_ok(H "0"));
}

static void test_report(void)
{
    struct worker_build_report r;
    char err[200], image[200];
    json_t *b = json_loads("{\"logs\":[{\"timestamp\":\"t\",\"level\":\"info\",\"message\":\"m\","
                           "\"extra\":1}],\"state\":\"ready\",\"digest\":\"sha256:" H "\"}",
                           0, NULL);

    CHECK(worker_build_parse(b, &r, err, sizeof(err)) == 0 && r.ends == 1 && r.size_bytes == 0);
    CHECK(json_array_size(r.logs) == 1 && !json_object_get(json_array_get(r.logs, 0), "extra"));
    json_decref(r.logs);
    json_decref(b);
    /* The size a ready build added: a whole, non-negative number of bytes. */
    b = json_loads("{\"state\":\"ready\",\"digest\":\"sha256:" H "\",\"size_bytes\":12345}", 0,
                   NULL);
    CHECK(worker_build_parse(b, &r, err, sizeof(err)) == 0 && r.size_bytes == 12345);
    json_decref(r.logs);
    json_decref(b);
    b = json_loads("{\"state\":\"ready\",\"digest\":\"sha256:" H "\",\"size_bytes\":-1}", 0, NULL);
    CHECK(worker_build_parse(b, &r, err, sizeof(err)) == -1 &&
          strcmp(err, "size_bytes: must be a whole number of bytes, 0 to 2^50") == 0);
    json_decref(b);
    b = json_loads("{\"state\":\"ready\",\"digest\":\"sha256:" H "\",\"size_bytes\":\"9\"}", 0,
                   NULL);
    CHECK(worker_build_parse(b, &r, err, sizeof(err)) == -1);
    json_decref(b);
    b = json_loads("{\"state\":\"ready\"}", 0, NULL);
    CHECK(worker_build_parse(b, &r, err, sizeof(err)) == -1 &&
          strcmp(err, "digest: a ready build needs the pushed image's sha256 digest") == 0);
    json_decref(b);
    b = json_loads("{\"logs\":[{\"timestamp\":\"t\",\"level\":\"loud\",\"message\":\"m\"}]}", 0,
                   NULL);
    CHECK(worker_build_parse(b, &r, err, sizeof(err)) == -1 &&
          strcmp(err, "logs[0]: level: must be debug, info, warn or error") == 0);
    json_decref(b);
    b = json_loads("{\"state\":\"done\"}", 0, NULL);
    CHECK(worker_build_parse(b, &r, err, sizeof(err)) == -1 &&
          strcmp(err, "state: must be building, ready or error") == 0);
    json_decref(b);
    CHECK(worker_build_image("127.0.0.1:5000/corral/fleet/tpl-a:bld-b", "sha256:" H, image,
                             sizeof(image)) == 0 &&
          strcmp(image, "127.0.0.1:5000/corral/fleet/tpl-a@sha256:" H) == 0);
    CHECK(worker_build_image("127.0.0.1:5000/corral/fleet/tpl-a", "sha256:" H, image,
                             sizeof(image)) == -1);
}

static void test_upload_token(void)
{
    char tok[UPLOAD_TOKEN_MAX], forged[UPLOAD_TOKEN_MAX];
    struct upload_grant g;
    const char *why = "";

    CHECK(upload_token_mint("s3cret", "0123456789abcdef", "tpl-1", H, 1000, tok) == 0);
    CHECK(upload_token_check("s3cret", tok, H, 999, &g, &why) == 0);
    CHECK(strcmp(g.ws, "0123456789abcdef") == 0 && strcmp(g.tpl, "tpl-1") == 0 && *g.nonce);
    CHECK(upload_token_check("s3cret", tok, H, 1001, &g, &why) == -1 &&
          strcmp(why, "expired") == 0);
    /* Another hash, another secret, another workspace: forged. */
    CHECK(upload_token_check("s3cret", tok, H2, 999, &g, &why) == -1 && strcmp(why, "forged") == 0);
    CHECK(upload_token_check("other", tok, H, 999, &g, &why) == -1 && strcmp(why, "forged") == 0);
    snprintf(forged, sizeof(forged), "fedcba9876543210%s", tok + 16);
    CHECK(upload_token_check("s3cret", forged, H, 999, &g, &why) == -1 &&
          strcmp(why, "forged") == 0 && g.ws[0] == '\0');
    CHECK(upload_token_check("s3cret", "a.b.c", H, 999, &g, &why) == -1 &&
          strcmp(why, "malformed") == 0);
    CHECK(upload_token_check("s3cret", NULL, H, 999, &g, &why) == -1);
}

void unit_template_build(int *total_passed, int *total_failed)
{
    test_build();
    test_build_state();
    test_registry_from();
    test_names();
    test_report();
    test_upload_token();
    *total_passed += passed;
    *total_failed += failed;
}
