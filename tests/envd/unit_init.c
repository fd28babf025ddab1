/* Table tests of POST /init's body (envd/init_parse.c, decision 0082): what a
 * warm sandbox accepts when it is claimed, and every fault named. Linked into
 * unit-envd (see unit_envd.c's main). */
#include "check.h"
#include "init_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CHECK_COUNTERS;

void test_init(int *total_passed, int *total_failed);

struct init_row {
    const char *body;
    const char *fault; /* NULL: accepted */
};

static const struct init_row rows[] = {
    {"{}", NULL},
    {"{\"accessToken\":\"tok-1\",\"envVars\":{\"A\":\"1\",\"_b9\":\"\"},\"defaultUser\":\"root\"}",
     NULL},
    {"{\"defaultUser\":\"web-app.1\"}", NULL},
    {"", "JSON object"},
    {"[]", "JSON object"},
    {"\"x\"", "JSON object"},
    {"{\"accessToken\":\"a\",\"accessToken\":\"b\"}", "JSON object"}, /* duplicate key */
    {"{\"accessToken\":\"\"}", "accessToken"},
    {"{\"accessToken\":\"a b\"}", "accessToken"},
    {"{\"accessToken\":\"a\\u0000b\"}", "JSON object"}, /* NUL: refused by the parser */
    {"{\"accessToken\":7}", "accessToken"},
    {"{\"envVars\":[]}", "object of strings"},
    {"{\"envVars\":{\"\":\"v\"}}", "not a variable name"},
    {"{\"envVars\":{\"9A\":\"v\"}}", "not a variable name"},
    {"{\"envVars\":{\"A-B\":\"v\"}}", "not a variable name"},
    {"{\"envVars\":{\"A\":null}}", "must be a string"},
    {"{\"envVars\":{\"A\":\"x\\u0000y\"}}", "JSON object"},
    {"{\"defaultUser\":\"\"}", "defaultUser"},
    {"{\"defaultUser\":\"-root\"}", "defaultUser"},
    {"{\"defaultUser\":\"a/b\"}", "defaultUser"},
    {"{\"defaultUser\":1}", "defaultUser"},
    {"{\"timestamp\":\"now\"}", "unknown field 'timestamp'"},
};

static void check_row(const struct init_row *row)
{
    struct init_req q;
    char msg[160] = "";
    int rc = init_parse(row->body, strlen(row->body), &q, msg, sizeof(msg));

    if (row->fault == NULL) {
        CHECK(rc == 0);
        if (rc == 0) {
            CHECK(json_is_object(q.env_vars));
            init_req_free(&q);
        }
        return;
    }
    CHECK(rc == -1);
    CHECK(strstr(msg, row->fault) != NULL);
    if (rc == -1 && strstr(msg, row->fault) == NULL)
        fprintf(stderr, "  %s: '%s', want '%s'\n", row->body, msg, row->fault);
}

/* The values land where envd reads them. */
static void check_values(void)
{
    const char *body =
        "{\"accessToken\":\"t0k\",\"envVars\":{\"X\":\"y z\"},\"defaultUser\":\"u\"}";
    struct init_req q;
    char msg[160];

    CHECK(init_parse(body, strlen(body), &q, msg, sizeof(msg)) == 0);
    CHECK(q.access_token && strcmp(q.access_token, "t0k") == 0);
    CHECK(strcmp(json_string_value(json_object_get(q.env_vars, "X")) ?: "", "y z") == 0);
    CHECK(strcmp(q.default_user, "u") == 0);
    init_req_free(&q);
    CHECK(q.access_token == NULL && q.env_vars == NULL);
}

/* Past the caps. */
static void check_caps(void)
{
    char big[INIT_TOKEN_MAX + 64], msg[160];
    struct init_req q;
    json_t *env = json_object(), *o;
    char *s;

    snprintf(big, sizeof(big), "{\"accessToken\":\"%0*d\"}", INIT_TOKEN_MAX + 1, 0);
    CHECK(init_parse(big, strlen(big), &q, msg, sizeof(msg)) == -1);
    for (int i = 0; i <= INIT_ENV_MAX; i++) {
        char k[16];
        snprintf(k, sizeof(k), "V%d", i);
        json_object_set_new(env, k, json_string("v"));
    }
    o = json_pack("{s:o}", "envVars", env);
    s = json_dumps(o, JSON_COMPACT);
    CHECK(s && init_parse(s, strlen(s), &q, msg, sizeof(msg)) == -1 && strstr(msg, "more than"));
    free(s);
    json_decref(o);
}

void test_init(int *total_passed, int *total_failed)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        check_row(&rows[i]);
    check_values();
    check_caps();
    *total_passed += passed;
    *total_failed += failed;
}
