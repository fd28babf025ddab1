/* Unit tests of Corral's pure functions: token shapes, secrets, validation.
 * Prints "N passed, N failed" and exits non-zero on any failure. */
#include "check.h"
#include "e2b_spec.h"
#include "request.h"
#include "sandbox_spec_parse.h"
#include "secret.h"
#include "tier.h"
#include "token.h"

#include <stdio.h>
#include <string.h>

CHECK_COUNTERS;

static void test_tokens(void)
{
    struct token t;

    token_parse("ck_0a1b_2c3d_"
                "ffee",
                &t);
    CHECK(t.kind == TOKEN_API_KEY && !strcmp(t.ws, "0a1b") && !strcmp(t.id, "2c3d"));
    token_parse("jn__2c3d_ffee", &t);
    CHECK(t.kind == TOKEN_JOIN && t.ws[0] == '\0');
    token_parse("ck__2c3d_ffee", &t); /* API keys always name a workspace */
    CHECK(t.kind == TOKEN_INVALID);
    token_parse("ck_0a1b_2c3d", &t);
    CHECK(t.kind == TOKEN_INVALID);
    token_parse("ck_0A1B_2c3d_ff", &t); /* uppercase is not ours */
    CHECK(t.kind == TOKEN_INVALID);
    token_parse("ck_0a1b_2c3d_ff_ee", &t);
    CHECK(t.kind == TOKEN_INVALID);
    token_parse("xx_0a1b_2c3d_ff", &t);
    CHECK(t.kind == TOKEN_INVALID);
    CHECK(token_is_id("deadbeef") && !token_is_id("") && !token_is_id("../etc"));
}

static void test_secrets(void)
{
    char a[SECRET_MAC_HEX], b[SECRET_MAC_HEX], r1[33], r2[33];

    secret_mac_hex("k", "msg", a);
    secret_mac_hex("k", "msg", b);
    CHECK(strlen(a) == 64 && secret_equal(a, b));
    secret_mac_hex("k2", "msg", b);
    CHECK(!secret_equal(a, b));
    CHECK(!secret_equal("abc", "abcd") && !secret_equal("", "a") && secret_equal("", ""));
    CHECK(secret_random_hex(r1, 16) == 0 && secret_random_hex(r2, 16) == 0 && strcmp(r1, r2) != 0);
}

static int spec_error(const char *json, const char *field)
{
    struct sandbox_spec s;
    char err[256] = "";
    json_t *j = json_loads(json, 0, NULL);
    int rv = sandbox_spec_parse(j, &s, err, sizeof(err));

    json_decref(j);
    if (rv == 0) {
        sandbox_spec_free(&s);
        return 0;
    }
    return strncmp(err, field, strlen(field)) == 0;
}

static void test_spec(void)
{
    struct sandbox_spec s;
    char err[256];
    json_t *j = json_loads("{\"template\":\"base\",\"timeout\":60,\"metadata\":{\"a\":\"b\"},"
                           "\"env\":{\"X_1\":\"y\"},\"cpu_cores\":0.5,\"memory_mb\":256,"
                           "\"allowed_domains\":[\"*.example.com\"],\"require_isolation\":"
                           "\"GVISOR\"}",
                           0, NULL);

    CHECK(sandbox_spec_parse(j, &s, err, sizeof(err)) == 0);
    CHECK(s.timeout_s == 60 && s.memory_mb == 256 && s.egress_policy == 1 && s.has_require &&
          s.require == TIER_GVISOR && !strcmp(s.metadata_json, "{\"a\":\"b\"}"));
    sandbox_spec_free(&s);
    json_decref(j);
    CHECK(spec_error("{\"timeout\":\"1\"}", "timeout"));
    CHECK(spec_error("{\"timeout\":86401}", "timeout"));
    CHECK(spec_error("{\"env\":{\"A B\":\"x\"}}", "env"));
    CHECK(spec_error("{\"metadata\":{\"a\":[]}}", "metadata.a"));
    CHECK(spec_error("{\"allowed_domains\":[\"a..b\"]}", "allowed_domains[0]"));
    CHECK(spec_error("{\"require_isolation\":\"UNKNOWN\"}", "require_isolation: UNKNOWN"));
    CHECK(spec_error("{\"workspace\":\"x\"}", "workspace"));
    CHECK(spec_error("{\"template\":\"../x\"}", "template"));
    CHECK(spec_error("{}", "") == 0);
}

static int e2b_status(const char *json, const char *prefix)
{
    struct sandbox_spec s;
    char err[256] = "";
    json_t *j = json_loads(json, 0, NULL);
    int st = e2b_spec_parse(j, &s, err, sizeof(err));

    json_decref(j);
    if (st == 0)
        sandbox_spec_free(&s);
    return st && strncmp(err, prefix, strlen(prefix)) == 0 ? st : st ? -1 : 0;
}

static void test_e2b_spec(void)
{
    struct sandbox_spec s;
    char err[256];
    json_t *j = json_loads("{\"templateID\":\"base\",\"timeout\":0,\"secure\":true,"
                           "\"network\":{\"allowPublicTraffic\":false,\"allowOut\":[\"a.com\"]},"
                           "\"metadata\":{\"corral.require_isolation\":\"GVISOR\"}}",
                           0, NULL);

    CHECK(e2b_spec_parse(j, &s, err, sizeof(err)) == 0);
    CHECK(s.secure && !s.public_traffic && s.egress_policy && s.timeout_s == 1 && s.has_require &&
          s.require == TIER_GVISOR);
    sandbox_spec_free(&s);
    json_decref(j);
    CHECK(e2b_status("{}", "templateID") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"envVars\":{\"1\":\"x\"}}", "envVars") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"autoPause\":true}", "autoPause") == 501);
    CHECK(e2b_status("{\"templateID\":\"base\",\"allow_internet_access\":false}", "") == 0);
}

static void test_misc(void)
{
    char out[16];
    enum tier t;

    CHECK(url_decode("a%20b+c", 7, out, sizeof(out)) == 0 && !strcmp(out, "a b c"));
    CHECK(url_decode("%2", 2, out, sizeof(out)) == -1);
    CHECK(url_decode("%zz", 3, out, sizeof(out)) == -1);
    CHECK(url_decode("0123456789abcdefg", 17, out, sizeof(out)) == -1);
    CHECK(tier_parse("GVISOR", &t) == 0 && t == TIER_GVISOR && tier_parse("gvisor", &t) == -1);
    CHECK(!strcmp(tier_name(TIER_UNKNOWN), "UNKNOWN"));
    CHECK(valid_domain("a-b.example.com") && !valid_domain("-a.com") && !valid_domain(""));
}

int main(void)
{
    test_tokens();
    test_secrets();
    test_spec();
    test_misc();
    test_e2b_spec();
    return CHECK_SUMMARY();
}
