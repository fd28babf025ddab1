/* Unit tests of handlers/e2b_network_parse.c (E2B's network.rules,
 * network.egressProxy and iam.tokens as the policy's parts) and of
 * common/egress_seal.c (their secrets sealed to a workspace, opened, masked). */
#include "check.h"
#include "e2b_network_parse.h"
#include "e2b_spec.h"
#include "egress_seal.h"

#include <stdlib.h>
#include <string.h>

void unit_e2b_network(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define TOKENS "{\"aws\":{\"audience\":\"sts.amazonaws.com\",\"tokenType\":\"JWT-SVID\"}}"

struct rule_row {
    const char *rules;
    const char *want;    /* the policy's "rules", compact; NULL: refused */
    const char *message; /* when refused: a part of the message */
};

static const struct rule_row rule_rows[] = {
    {"{\"API.example.com\":[{\"transform\":{\"headers\":{\"Authorization\":\"Bearer x\"}}}]}",
     "{\"api.example.com\":[{\"headers\":{\"Authorization\":\"Bearer x\"}}]}", NULL},
    {"{\"*.example.com\":[{\"transform\":{\"headers\":{\"X-K\":\"${e2b.secrets.k-1}\"}}}]}",
     "{\"*.example.com\":[{\"headers\":{\"X-K\":\"${e2b.secrets.k-1}\"}}]}", NULL},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"A\":\"Bearer ${e2b.identity.tokens.aws}\"}}}]}",
     "{\"a.test\":[{\"headers\":{\"A\":\"Bearer ${e2b.identity.tokens.aws}\"}}]}", NULL},
    {"{\"a.test\":[{}]}", "{\"a.test\":[{\"headers\":{}}]}", NULL},
    {"{\"*\":[]}", NULL, "network.rules[*]: want a host name"},
    {"{\"10.0.0.1\":[]}", NULL, "want a host name"},
    {"{\"a.test\":{}}", NULL, "a list of at most 8"},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"Bad Name\":\"v\"}}}]}", NULL, "header Bad Name"},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"A\":\"x\\r\\nEvil: 1\"}}}]}", NULL,
     "without CR, LF"},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"A\":7}}}]}", NULL, "a string value"},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"Content-Length\":\"0\"}}}]}", NULL,
     "not one that frames"},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"host\":\"evil.test\"}}}]}", NULL, "header host"},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"A\":\"${e2b.identity.tokens.gcp}\"}}}]}", NULL,
     "identity token gcp is not defined"},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"A\":\"${e2b.secrets.}\"}}}]}", NULL,
     "a placeholder must be"},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"A\":\"${e2b.other.x}\"}}}]}", NULL,
     "a placeholder must be"},
    {"{\"a.test\":[{\"transform\":{\"headers\":{\"A\":\"${e2b.secrets.x\"}}}]}", NULL,
     "a placeholder must be"},
    {"[]", NULL, "want an object of at most 64 hosts"},
};

static void test_rules(void)
{
    json_t *tokens = json_loads(TOKENS, 0, NULL);

    for (size_t i = 0; i < sizeof(rule_rows) / sizeof(rule_rows[0]); i++) {
        const struct rule_row *r = &rule_rows[i];
        json_t *in = json_loads(r->rules, 0, NULL), *out = NULL;
        char err[256] = "", *got = NULL;
        int rc = e2b_rules_parse(in, tokens, "network.rules", &out, err, sizeof(err));
        int ok;

        if (out)
            got = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
        ok = r->want ? rc == 0 && got && strcmp(got, r->want) == 0
                     : rc == -1 && !out && strstr(err, r->message) != NULL;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  rules row %zu: rc %d got %s err \"%s\"\n", i, rc, got ? got : "-",
                    err);
        free(got);
        json_decref(out);
        json_decref(in);
    }
    json_decref(tokens);
}

struct proxy_row {
    const char *proxy;
    int ok;
};

static const struct proxy_row proxy_rows[] = {
    {"{\"address\":\"proxy.example.com:1080\"}", 1},
    {"{\"address\":\"198.51.100.7:1080\",\"username\":\"u\",\"password\":\"p\"}", 1},
    {"{\"address\":\"[2001:db8::1]:1080\"}", 1},
    {"{\"address\":\"10.0.0.1:1080\"}", 0},  /* private */
    {"{\"address\":\"127.0.0.1:1080\"}", 0}, /* loopback */
    {"{\"address\":\"proxy.example.com\"}", 0},
    {"{\"address\":\"proxy.example.com:0\"}", 0},
    {"{\"address\":\"proxy.example.com:70000\"}", 0},
    {"{\"address\":\"*.example.com:1080\"}", 0},
    {"{\"address\":\"p.example.com:1080\",\"password\":\"p\"}", 0}, /* no username */
    {"{\"address\":\"p.example.com:1080\",\"username\":\"u\"}", 0}, /* no password */
    {"{\"address\":\"p.example.com:1080\",\"username\":\"\"}", 0},
    {"{}", 0},
};

static void test_upstream(void)
{
    for (size_t i = 0; i < sizeof(proxy_rows) / sizeof(proxy_rows[0]); i++) {
        json_t *in = json_loads(proxy_rows[i].proxy, 0, NULL), *out = NULL;
        char err[256] = "";
        int rc = e2b_upstream_parse(in, "network.egressProxy", &out, err, sizeof(err));
        int ok = proxy_rows[i].ok ? rc == 0 && json_is_object(out)
                                  : rc == -1 && !out && strstr(err, "network.egressProxy");

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  proxy row %zu: rc %d err \"%s\"\n", i, rc, err);
        json_decref(out);
        json_decref(in);
    }
}

static void test_iam(void)
{
    static const struct {
        const char *iam;
        int ok, has;
    } rows[] = {
        {"{\"tokens\":" TOKENS "}", 1, 1},
        {"{\"tokens\":{}}", 1, 0},
        {"{}", 1, 0},
        {"{\"tokens\":{\"a\":{\"audience\":\"x\",\"tokenType\":\"OIDC\"}}}", 0, 0},
        {"{\"tokens\":{\"a\":{\"audience\":\"\",\"tokenType\":\"JWT-SVID\"}}}", 0, 0},
        {"{\"tokens\":{\"a{b}\":{\"audience\":\"x\",\"tokenType\":\"JWT-SVID\"}}}", 0, 0},
        {"{\"tokens\":[]}", 0, 0},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_t *in = json_loads(rows[i].iam, 0, NULL), *out = NULL;
        char err[256] = "";
        int rc = e2b_iam_parse(in, &out, err, sizeof(err));
        int ok = rows[i].ok ? rc == 0 && (out != NULL) == rows[i].has
                            : rc == -1 && strstr(err, "iam.tokens") != NULL;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  iam row %zu: rc %d err \"%s\"\n", i, rc, err);
        json_decref(out);
        json_decref(in);
    }
}

/* An update keeps the sandbox's identity; rules alone make a policy. */
static void test_update(void)
{
    json_t *iam = json_loads("{\"tokens\":" TOKENS "}", 0, NULL);
    json_t *body = json_loads(
        "{\"rules\":{\"a.test\":[{\"transform\":{\"headers\":{\"A\":\"${e2b.identity.tokens."
        "aws}\"}}}]},\"egressProxy\":{\"address\":\"p.test:1080\"}}",
        0, NULL);
    char err[256] = "", *policy = NULL;
    json_t *p;

    CHECK(e2b_network_parse_iam(body, iam, &policy, err, sizeof(err)) == 0);
    p = policy ? json_loads(policy, 0, NULL) : NULL;
    CHECK(json_object_get(json_object_get(p, "iam"), "tokens") != NULL);
    CHECK(json_object_get(p, "upstream") != NULL && json_object_get(p, "rules") != NULL);
    CHECK(json_array_size(json_object_get(p, "allow")) == 0);
    free(policy);
    json_decref(p);
    /* Without the sandbox's identity, the placeholder names nothing. */
    policy = NULL;
    CHECK(e2b_network_parse(body, &policy, err, sizeof(err)) == 400 && !policy &&
          strstr(err, "identity token aws is not defined"));
    json_decref(body);
    json_decref(iam);
}

static void test_seal(void)
{
    const char *text = "{\"allow\":[],\"deny\":[],\"rules\":{\"a.test\":[{\"headers\":{\"A\":"
                       "\"s3cret-value\"}}]},\"upstream\":{\"address\":\"p.test:1\",\"username\":"
                       "\"u\",\"password\":\"pw-value\"}}";
    char *sealed = egress_seal_text("server-secret", "ws1", text);
    json_t *p = sealed ? json_loads(sealed, 0, NULL) : NULL, *q, *m;

    CHECK(sealed && !strstr(sealed, "s3cret-value") && !strstr(sealed, "pw-value"));
    q = json_deep_copy(p);
    CHECK(egress_open("server-secret", "ws1", p) == 0);
    m = json_loads(text, 0, NULL);
    CHECK(json_equal(p, m));
    CHECK(egress_open("server-secret", "ws2", q) == -1); /* another workspace's */
    json_decref(q);
    q = json_loads(sealed, 0, NULL);
    CHECK(egress_open("other-secret", "ws1", q) == -1);
    json_decref(q);
    egress_mask(p);
    q = json_object_get(
        json_object_get(json_array_get(json_object_get(json_object_get(p, "rules"), "a.test"), 0),
                        "headers"),
        "A");
    CHECK(json_is_string(q) && strcmp(json_string_value(q), "***") == 0);
    CHECK(!json_object_get(json_object_get(p, "upstream"), "password"));
    CHECK(json_object_get(json_object_get(p, "upstream"), "username") != NULL);
    json_decref(p);
    json_decref(m);
    free(sealed);
}

void unit_e2b_network(int *total_passed, int *total_failed)
{
    test_rules();
    test_upstream();
    test_iam();
    test_update();
    test_seal();
    *total_passed += passed;
    *total_failed += failed;
}
