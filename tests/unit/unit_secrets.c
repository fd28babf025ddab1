/* Unit tests of decision 0090's parsers: handlers/secrets_parse.c (a
 * secret's name and reference, create and update bodies with their metadata
 * limits, the list's query) and handlers/egress_resolve_parse.c (a worker's
 * resolve body, a token's definition in a sandbox's egress policy), and the
 * routes' places in router.c's table. Table-driven, no Redis. */
#include "check.h"
#include "egress_resolve_parse.h"
#include "router.h"
#include "secrets_parse.h"
#include "secrets_routes.h"

#include <stdlib.h>
#include <string.h>

void unit_secrets(int *total_passed, int *total_failed);

static int passed, failed;

static const struct {
    const char *in, *want; /* want NULL: refused */
} names[] = {
    {"openai-api-key", "openai-api-key"},
    {"OpenAI_Key.v2", "openai_key.v2"}, /* lower-cased */
    {"a", "a"},
    {"0123456789012345678901234567890123456789012345678901234567890123",
     "0123456789012345678901234567890123456789012345678901234567890123"},
    {"01234567890123456789012345678901234567890123456789012345678901234", NULL}, /* 65 */
    {"", NULL},
    {"sec_abc", NULL}, /* the ids' prefix */
    {"SEC_abc", NULL},
    {"has space", NULL},
    {"brace{", NULL},
    {"slash/x", NULL},
    {"ümlaut", NULL},
    {"tab\t", NULL},
};

static void test_names(void)
{
    char out[SECRET_NAME_MAX + 1], err[128];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int rc = secret_name_parse(names[i].in, out, err, sizeof(err));
        CHECK(names[i].want ? rc == 0 && strcmp(out, names[i].want) == 0
                            : rc == -1 && strncmp(err, "name: ", 6) == 0);
    }
    CHECK(secret_name_parse(NULL, out, err, sizeof(err)) == -1);
    /* a reference: an id as it is, a name canonical, anything else refused */
    CHECK(secret_ref_parse("sec_0123456789abcdef0123", out) == 0 &&
          strcmp(out, "sec_0123456789abcdef0123") == 0);
    CHECK(secret_ref_parse("My-Key", out) == 0 && strcmp(out, "my-key") == 0);
    CHECK(secret_ref_parse("sec_0123", out) == -1);
    CHECK(secret_ref_parse("a%20b", out) == -1);
    CHECK(secret_id_ok("sec_0123456789abcdef0123") && !secret_id_ok("sec_0123456789ABCDEF0123") &&
          !secret_id_ok("sec_0123456789abcdef012") && !secret_id_ok("xec_0123456789abcdef0123"));
}

/* body (JSON text) parsed as a create (or an update): 0 or -1, err starting
 * with field when refused. */
static json_t *held; /* the last body: b->value points into it */

static int body(const char *text, int create, const char *field, struct secret_body *b)
{
    json_t *j = json_loads(text, JSON_ALLOW_NUL, NULL);
    char err[160] = "";
    int rc = secret_body_parse(j, create, b, err, sizeof(err));

    if (rc != 0 && (!field || strncmp(err, field, strlen(field)) != 0)) {
        fprintf(stderr, "  body %s: %s\n", text, err);
        rc = -2;
    }
    CHECK(strstr(err, "s3cr3t") == NULL); /* a refusal never quotes the value */
    json_decref(held);
    held = j;
    return rc;
}

static char *big_string(size_t n)
{
    char *s = malloc(n + 1);

    memset(s, 'v', n);
    s[n] = '\0';
    return s;
}

static void test_bodies(void)
{
    struct secret_body b;
    char text[70000 + 64], *v;

    CHECK(body("{\"name\":\"Db-Pass\",\"value\":\"s3cr3t\"}", 1, NULL, &b) == 0 &&
          strcmp(b.name, "db-pass") == 0 && strcmp(b.value, "s3cr3t") == 0 && !b.metadata);
    secret_body_free(&b);
    CHECK(body("{\"name\":\"k\",\"value\":\"x\",\"metadata\":{\"b\":\"2\",\"a\":\"1\"}}", 1, NULL,
               &b) == 0 &&
          b.metadata && strcmp(b.metadata, "{\"a\":\"1\",\"b\":\"2\"}") == 0);
    secret_body_free(&b);
    CHECK(body("{\"name\":\"k\",\"value\":\"x\",\"metadata\":null}", 1, NULL, &b) == 0 &&
          !b.metadata);
    CHECK(body("{\"value\":\"x\"}", 1, "name: ", &b) == -1);
    CHECK(body("{\"name\":\"sec_x\",\"value\":\"x\"}", 1, "name: ", &b) == -1);
    CHECK(body("{\"name\":\"k\"}", 1, "value: ", &b) == -1);
    CHECK(body("{\"name\":\"k\",\"value\":\"\"}", 1, "value: ", &b) == -1);
    CHECK(body("{\"name\":\"k\",\"value\":7}", 1, "value: ", &b) == -1);
    CHECK(body("{\"name\":\"k\",\"value\":\"a\\u0000b\"}", 1, "value: ", &b) == -1);
    CHECK(body("{\"name\":\"k\",\"value\":\"s3cr3t\",\"metadata\":{\"a\":7}}", 1,
               "metadata: ", &b) == -1);
    /* an update has no name; its value and metadata as a create's */
    CHECK(body("{\"value\":\"x\"}", 0, NULL, &b) == 0 && b.name[0] == '\0');
    CHECK(body("{\"value\":\"x\",\"metadata\":[]}", 0, "metadata: ", &b) == -1);
    CHECK(body("{\"value\":\"x\",\"metadata\":{\"a\":1}}", 0, "metadata: ", &b) == -1);
    CHECK(body("{\"value\":\"x\",\"metadata\":{\"\":\"v\"}}", 0, "metadata: ", &b) == -1);
    /* the value's limit, 65536 bytes */
    v = big_string(SECRET_VALUE_MAX);
    snprintf(text, sizeof(text), "{\"value\":\"%s\"}", v);
    CHECK(body(text, 0, NULL, &b) == 0);
    snprintf(text, sizeof(text), "{\"value\":\"%sv\"}", v);
    CHECK(body(text, 0, "value: ", &b) == -1);
    free(v);
    json_decref(held);
    held = NULL;
}

/* A metadata object of n entries, keys of klen bytes and values of vlen. */
static int metadata(size_t n, size_t klen, size_t vlen)
{
    json_t *m = json_object(), *j;
    char *k = big_string(klen), *v = big_string(vlen);
    struct secret_body b;
    char err[160];
    int rc;

    for (size_t i = 0; i < n; i++) { /* keys unique by their first 3 bytes (klen >= 3) */
        char num[8];
        snprintf(num, sizeof(num), "%03zu", i % 1000);
        memcpy(k, num, 3);
        json_object_set_new(m, k, json_string(v));
    }
    j = json_pack("{s:s, s:o}", "value", "x", "metadata", m);
    rc = secret_body_parse(j, 0, &b, err, sizeof(err));
    secret_body_free(&b);
    json_decref(j);
    free(k);
    free(v);
    return rc;
}

static void test_metadata_limits(void)
{
    CHECK(metadata(32, 8, 8) == 0);
    CHECK(metadata(33, 8, 8) == -1);
    CHECK(metadata(1, 128, 8) == 0);
    CHECK(metadata(1, 129, 8) == -1);
    CHECK(metadata(1, 8, 1024) == 0);
    CHECK(metadata(1, 8, 1025) == -1);
    CHECK(metadata(8, 8, 1016) == 0);  /* 8 * 1024 bytes: the total's limit */
    CHECK(metadata(8, 8, 1017) == -1); /* one byte more each */
}

static int list_query(const char *query, size_t *limit, char after[SECRET_ID_MAX])
{
    struct request req;
    char err[128];

    memset(&req, 0, sizeof(req));
    req.query = query;
    return secret_list_query_parse(&req, limit, after, err, sizeof(err));
}

static void test_list_query(void)
{
    size_t limit;
    char after[SECRET_ID_MAX];

    CHECK(list_query("", &limit, after) == 0 && limit == 100 && after[0] == '\0');
    CHECK(list_query("limit=5&nextToken=sec_0123456789abcdef0123", &limit, after) == 0 &&
          limit == 5 && strcmp(after, "sec_0123456789abcdef0123") == 0);
    CHECK(list_query("limit=0", &limit, after) == -1);
    CHECK(list_query("limit=101", &limit, after) == -1);
    CHECK(list_query("limit=x", &limit, after) == -1);
    CHECK(list_query("nextToken=bogus", &limit, after) == -1);
}

static int resolve(const char *text, struct resolve_body *b, const char *field)
{
    json_t *j = json_loads(text, 0, NULL);
    char err[160] = "";
    int rc = egress_resolve_parse(j, b, err, sizeof(err));

    json_decref(j);
    return rc == 0 || (field && strncmp(err, field, strlen(field)) == 0) ? rc : -2;
}

static void test_resolve_body(void)
{
    struct resolve_body b;
    char text[2048];
    size_t n;

    CHECK(resolve("{\"sandbox\":\"ab12\",\"host\":\"API.Example.com\",\"secrets\":[\"K\",\"k\","
                  "\"db\"],\"tokens\":[\"aws\",\"aws\"]}",
                  &b, NULL) == 0 &&
          strcmp(b.sandbox, "ab12") == 0 && strcmp(b.host, "api.example.com") == 0 &&
          b.nsecrets == 2 && strcmp(b.secrets[0], "k") == 0 && strcmp(b.secrets[1], "db") == 0 &&
          b.ntokens == 1 && strcmp(b.tokens[0], "aws") == 0);
    CHECK(resolve("{\"sandbox\":\"ab12\",\"host\":\"h\"}", &b, NULL) == 0 && b.nsecrets == 0 &&
          b.ntokens == 0);
    CHECK(resolve("{\"host\":\"h\"}", &b, "sandbox: ") == -1);
    CHECK(resolve("{\"sandbox\":\"../x\",\"host\":\"h\"}", &b, "sandbox: ") == -1);
    CHECK(resolve("{\"sandbox\":\"ab\"}", &b, NULL) == 0 && b.host[0] == '\0');
    CHECK(resolve("{\"sandbox\":\"ab\",\"host\":null,\"secrets\":null}", &b, NULL) == 0);
    CHECK(resolve("{\"sandbox\":\"ab\",\"host\":\"\"}", &b, "host: ") == -1);
    CHECK(resolve("{\"sandbox\":\"ab\",\"host\":\"h/x\"}", &b, "host: ") == -1);
    CHECK(resolve("{\"sandbox\":\"ab\",\"host\":\"h\",\"secrets\":\"k\"}", &b, "secrets: ") == -1);
    /* a name that cannot exist is for the route to refuse (422), naming it */
    CHECK(resolve("{\"sandbox\":\"ab\",\"host\":\"h\",\"secrets\":[\"sec_x\",\"A b\"]}", &b,
                  NULL) == 0 &&
          strcmp(b.secrets[0], "sec_x") == 0 && strcmp(b.secrets[1], "a b") == 0);
    CHECK(resolve("{\"sandbox\":\"ab\",\"host\":\"h\",\"secrets\":[\"a}\"]}", &b, "secrets: ") ==
          -1);
    CHECK(resolve("{\"sandbox\":\"ab\",\"host\":\"h\",\"secrets\":[\"a\\nb\"]}", &b, "secrets: ") ==
          -1);
    CHECK(resolve("{\"sandbox\":\"ab\",\"host\":\"h\",\"tokens\":[\"a{b}\"]}", &b, "tokens: ") ==
          -1);
    CHECK(resolve("{\"sandbox\":\"ab\",\"host\":\"h\",\"tokens\":[\"\"]}", &b, "tokens: ") == -1);
    /* 16 names each at most */
    n = (size_t)snprintf(text, sizeof(text), "{\"sandbox\":\"ab\",\"host\":\"h\",\"secrets\":[");
    for (int i = 0; i < 17; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\"s%d\"", i ? "," : "", i);
    snprintf(text + n, sizeof(text) - n, "]}");
    CHECK(resolve(text, &b, "secrets: ") == -1);
    snprintf(text + n - 6, sizeof(text) - n + 6, "]}"); /* the 17th, ,"s16", dropped */
    CHECK(resolve(text, &b, NULL) == 0 && b.nsecrets == 16);
}

static void test_token_defs(void)
{
    const char *policy = "{\"allow\":[],\"iam\":{\"tokens\":{"
                         "\"aws\":{\"audience\":\"sts.amazonaws.com\",\"tokenType\":\"JWT-SVID\"},"
                         "\"other\":{\"audience\":\"x\",\"tokenType\":\"OIDC\"},"
                         "\"noaud\":{\"tokenType\":\"JWT-SVID\"}}}}";
    char aud[RESOLVE_AUDIENCE_MAX];

    CHECK(egress_resolve_token(policy, "aws", aud) == 1 && strcmp(aud, "sts.amazonaws.com") == 0);
    CHECK(egress_resolve_token(policy, "gcp", aud) == 0);
    CHECK(egress_resolve_token(policy, "other", aud) == 0);
    CHECK(egress_resolve_token(policy, "noaud", aud) == 0);
    CHECK(egress_resolve_token("", "aws", aud) == 0);
    CHECK(egress_resolve_token("{\"allow\":[\"x\"]}", "aws", aud) == 0);
    CHECK(egress_resolve_token("not json", "aws", aud) == 0);
}

/* The routes: who may call them, and that E2B's /secrets are served now. */
static void test_routes(void)
{
    static const struct {
        const char *method, *path;
        handler_fn fn;
        enum access access;
    } want[] = {
        {"GET", "/secrets", h_secrets_list, ACCESS_MEMBER},
        {"POST", "/secrets", h_secret_create, ACCESS_MEMBER},
        {"GET", "/secrets/sec_x", h_secret_get, ACCESS_MEMBER},
        {"POST", "/secrets/name", h_secret_update, ACCESS_MEMBER},
        {"DELETE", "/secrets/name", h_secret_delete, ACCESS_MEMBER},
        {"GET", "/identity/ab12/.well-known/openid-configuration", h_identity_discovery,
         ACCESS_PUBLIC},
        {"GET", "/identity/ab12/jwks.json", h_identity_jwks, ACCESS_PUBLIC},
        {"POST", "/v1/workspace/identity-keys/rotate", h_identity_rotate, ACCESS_OWNER},
        {"POST", "/v1/worker/egress-resolve", h_worker_egress_resolve, ACCESS_WORKER},
    };
    struct request req;
    struct route_match m;

    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        memset(&req, 0, sizeof(req));
        req.method = want[i].method;
        snprintf(req.path, sizeof(req.path), "%s", want[i].path);
        router_match(&req, &m);
        CHECK(m.outcome == ROUTE_SERVED && m.fn == want[i].fn && m.access == want[i].access);
    }
    memset(&req, 0, sizeof(req));
    req.method = "PUT";
    snprintf(req.path, sizeof(req.path), "/secrets/x");
    router_match(&req, &m);
    CHECK(m.outcome == ROUTE_METHOD_NOT_ALLOWED);
}

void unit_secrets(int *total_passed, int *total_failed)
{
    test_names();
    test_bodies();
    test_metadata_limits();
    test_list_query();
    test_resolve_body();
    test_token_defs();
    test_routes();
    printf("unit_secrets: %d passed, %d failed\n", passed, failed);
    *total_passed += passed;
    *total_failed += failed;
}
