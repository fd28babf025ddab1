/* Unit tests of Corral's pure functions: token shapes, secrets, validation.
 * Prints "N passed, N failed" and exits non-zero on any failure. */
#include "accounts.h"
#include "check.h"
#include "clock.h"
#include "corral_conf.h"
#include "e2b_spec.h"
#include "egress_policy.h"
#include "env_seal.h"
#include "request.h"
#include "sandbox_spec_parse.h"
#include "secret.h"
#include "tier.h"
#include "token.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* 1 when json is refused with exactly this field and rule. */
static int spec_code(const char *json, enum spec_field field, enum spec_rule rule)
{
    struct sandbox_spec s;
    struct spec_error e;
    json_t *j = json_loads(json, 0, NULL);
    int rv = sandbox_spec_parse_coded(j, &s, &e);

    json_decref(j);
    if (rv == 0)
        sandbox_spec_free(&s);
    return rv != 0 && e.field == field && e.rule == rule;
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
    CHECK(spec_error("{\"secure\":false}",
                     "secure: native sandboxes always have an envd access token"));
    CHECK(spec_error("{\"secure\":1}", "secure: must be true"));
    CHECK(spec_error("{\"allowed_domains\":[\"10.0.0.0/8\"]}", "allowed_domains[0]"));
    CHECK(spec_error("{\"allowed_domains\":\"a.com\"}", "allowed_domains: must be an array"));
    CHECK(spec_code("{\"env\":{\"1X\":\"v\"}}", SPEC_FIELD_ENV, SPEC_RULE_MAP_KEY));
    CHECK(spec_code("{\"tenant\":\"x\"}", SPEC_FIELD_UNKNOWN, SPEC_RULE_WORKSPACE));
    CHECK(spec_code("{\"cpu_cores\":65}", SPEC_FIELD_CPU_CORES, SPEC_RULE_VALUE));
    j = json_loads("{\"secure\":true,\"allowed_domains\":[]}", 0, NULL);
    CHECK(sandbox_spec_parse(j, &s, err, sizeof(err)) == 0 && s.secure && s.egress_policy &&
          !strcmp(s.egress_json, "{\"allow\":[],\"deny\":[\"0.0.0.0/0\",\"::/0\"]}"));
    sandbox_spec_free(&s);
    json_decref(j);
    j = json_loads("{}", 0, NULL);
    CHECK(sandbox_spec_parse(j, &s, err, sizeof(err)) == 0 && s.secure && !s.egress_json &&
          !s.egress_policy);
    sandbox_spec_free(&s);
    json_decref(j);
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
    CHECK(e2b_status("{\"templateID\":\"base\",\"autoPause\":true}", "") == 0);
    CHECK(e2b_status("{\"templateID\":\"base\",\"autoPause\":1}", "autoPause") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"autoResume\":{\"enabled\":true}}",
                     "autoResume.enabled") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"autoPause\":true,\"autoResume\":{\"enabled\":1}}",
                     "autoResume.enabled") == 400);
    j = json_loads("{\"templateID\":\"base\",\"autoPause\":true,\"autoResume\":{\"enabled\":true}}",
                   0, NULL);
    CHECK(e2b_spec_parse(j, &s, err, sizeof(err)) == 0 && s.pause_on_timeout && s.auto_resume);
    sandbox_spec_free(&s);
    json_decref(j);
    /* The SDK's onTimeout {action: 'pause', keepMemory: false} (decision 0074). */
    j = json_loads("{\"templateID\":\"base\",\"autoPause\":true,\"autoPauseMemory\":false}", 0,
                   NULL);
    CHECK(e2b_spec_parse(j, &s, err, sizeof(err)) == 0 && s.pause_on_timeout && !s.keep_memory);
    sandbox_spec_free(&s);
    json_decref(j);
    CHECK(e2b_status("{\"templateID\":\"base\",\"autoPauseMemory\":false}", "autoPauseMemory") ==
          400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"autoPause\":true,\"autoPauseMemory\":false,"
                     "\"autoResume\":{\"enabled\":true}}",
                     "autoPauseMemory") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"autoPause\":true,\"autoPauseMemory\":1}",
                     "autoPauseMemory") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"autoPauseMemory\":true}", "") == 0);
    j = json_loads("{\"templateID\":\"base\",\"autoPause\":false}", 0, NULL);
    CHECK(e2b_spec_parse(j, &s, err, sizeof(err)) == 0 && !s.pause_on_timeout && !s.auto_resume);
    sandbox_spec_free(&s);
    json_decref(j);
    CHECK(e2b_status("{\"templateID\":\"base\",\"allow_internet_access\":false}", "") == 0);
    CHECK(e2b_status("{\"templateID\":\"base\",\"network\":{\"denyOut\":[\"8.8.8.8\"]}}", "") == 0);
    CHECK(e2b_status("{\"templateID\":\"base\",\"network\":{\"denyOut\":[\"a.com\"]}}",
                     "network.denyOut[0]") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"network\":{\"allowOut\":[\"x\",\"a b\"]}}",
                     "network.allowOut[1]: not a host name, IP address or CIDR") == 400);
    CHECK(e2b_status(
              "{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":\"localhost:${PORT}\"}}",
              "") == 0);
    CHECK(e2b_status("{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":\"a b\"}}",
                     "network.maskRequestHost: want a host") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":\"a\\r\\nX: y\"}}",
                     "network.maskRequestHost") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":\"${HOST}\"}}",
                     "network.maskRequestHost") == 400);
    /* Native faults worded with E2B's names (a {field, rule} code, no rewriting). */
    CHECK(e2b_status("{\"templateID\":\"Bad\"}", "templateID: must be a name of 1-64 characters") ==
          400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"envVars\":{\"A\":1}}",
                     "envVars.A: must be a string") == 400);
    CHECK(e2b_status("{\"templateID\":\"base\",\"metadata\":{\"corral.require_isolation\":"
                     "\"UNKNOWN\"}}",
                     "metadata.corral.require_isolation: UNKNOWN satisfies no requirement") == 400);
    j = json_loads("{\"templateID\":\"base\",\"secure\":false,\"allow_internet_access\":false,"
                   "\"network\":{\"denyOut\":[\"::/0\"]}}",
                   0, NULL);
    CHECK(e2b_spec_parse(j, &s, err, sizeof(err)) == 0 && !s.secure && s.internet == 0 &&
          s.egress_policy &&
          !strcmp(s.egress_json, "{\"allow\":[],\"deny\":[\"::/0\",\"0.0.0.0/0\"]}"));
    sandbox_spec_free(&s);
    json_decref(j);
    j = json_loads("{\"templateID\":\"base\",\"allow_internet_access\":true}", 0, NULL);
    CHECK(e2b_spec_parse(j, &s, err, sizeof(err)) == 0 && s.internet == 1 && !s.egress_policy);
    sandbox_spec_free(&s);
    json_decref(j);
}

static int rule_kind(const char *text)
{
    struct egress_rule r;
    return egress_rule_parse(text, &r) == 0 ? (int)r.kind : -1;
}

static int rule_private(const char *text)
{
    struct egress_rule r;
    return egress_rule_parse(text, &r) == 0 && egress_rule_is_private(&r);
}

static void test_egress_rule(void)
{
    struct egress_rule r;
    unsigned char a[4] = {10, 1, 2, 3};

    CHECK(rule_kind("example.com") == EGRESS_RULE_NAME);
    CHECK(rule_kind("*.example.com") == EGRESS_RULE_WILDCARD);
    CHECK(rule_kind("8.8.8.8") == EGRESS_RULE_CIDR && rule_kind("8.8.8.0/24") == EGRESS_RULE_CIDR);
    CHECK(rule_kind("2001:db8::/32") == EGRESS_RULE_CIDR && rule_kind("::/0") == EGRESS_RULE_CIDR);
    CHECK(rule_kind("0.0.0.0/0") == EGRESS_RULE_CIDR);
    CHECK(rule_kind("8.8.8.8/33") == -1 && rule_kind("::/129") == -1 && rule_kind("1.2.3/8") == -1);
    CHECK(rule_kind("999.1.1.1") == -1 && rule_kind("1.2.3.4/") == -1 &&
          rule_kind("1.2.3.4/08") == -1);
    CHECK(rule_kind("*") == -1 && rule_kind("a..b") == -1 && rule_kind("exa mple.com") == -1);
    CHECK(rule_kind("[::1]") == -1 && rule_kind("") == -1 && rule_kind("http://a.com") == -1);
    CHECK(rule_private("10.0.0.0/8") && rule_private("10.1.2.3") && rule_private("127.0.0.1"));
    CHECK(rule_private("100.64.0.1") && rule_private("169.254.169.254") &&
          rule_private("172.31.0.0/16"));
    CHECK(rule_private("192.168.1.0/24") && rule_private("::1") && rule_private("fd00::/8"));
    CHECK(rule_private("fe80::1") && rule_private("::ffff:10.0.0.1"));
    CHECK(!rule_private("0.0.0.0/0") && !rule_private("8.8.8.8") && !rule_private("172.32.0.1"));
    CHECK(!rule_private("10.0.0.0/7") && !rule_private("100.128.0.1") &&
          !rule_private("example.com"));
    CHECK(egress_rule_parse("10.0.0.0/8", &r) == 0 && egress_rule_contains(&r, AF_INET, a));
    a[0] = 11;
    CHECK(!egress_rule_contains(&r, AF_INET, a));
}

static int list_error(const char *json, unsigned kinds, int is_allow, const char *prefix)
{
    char err[256] = "";
    json_t *j = json_loads(json, 0, NULL);
    int rv = egress_list_check(j, "f", kinds, is_allow, err, sizeof(err));

    json_decref(j);
    return rv == 0 ? 0 : strncmp(err, prefix, strlen(prefix)) == 0;
}

static void test_egress_policy(void)
{
    const unsigned all = EGRESS_RULE_NAME | EGRESS_RULE_WILDCARD | EGRESS_RULE_CIDR;
    json_t *deny = json_pack("[s]", "::/0"), *allow = json_array();
    char *text;

    CHECK(list_error("[\"a.com\",\"1.2.3.4/32\"]", all, 1, "") == 0);
    CHECK(list_error("[\"a.com\",\"b c\"]", all, 1, "f[1]: not a host name, IP address or CIDR"));
    CHECK(list_error("[\"a.com\"]", EGRESS_RULE_CIDR, 0, "f[0]: domain names are not supported"));
    CHECK(list_error("[\"1.1.1.1\"]", EGRESS_RULE_NAME, 1, "f[0]: not a host name"));
    CHECK(list_error("[\"10.0.0.1\"]", all, 1, "f[0]: 10.0.0.1 is a private destination"));
    CHECK(list_error("[\"10.0.0.1\"]", all, 0, "") == 0);
    CHECK(list_error("[7]", all, 1, "f[0]") &&
          list_error("\"a.com\"", all, 1, "f: must be an array"));
    egress_deny_all(deny);
    text = egress_policy_text(allow, deny);
    CHECK(text && !strcmp(text, "{\"allow\":[],\"deny\":[\"::/0\",\"0.0.0.0/0\"]}"));
    free(text);
    json_decref(deny);
    json_decref(allow);
}

static char *network_policy(const char *json, int e2b, int *status)
{
    char err[256], *policy = NULL;
    json_t *j = json_loads(json, 0, NULL);

    *status = e2b ? e2b_network_parse(j, &policy, err, sizeof(err))
                  : sandbox_network_parse(j, &policy, err, sizeof(err));
    json_decref(j);
    return policy;
}

static void test_network_update(void)
{
    int st;
    char *p;

    p = network_policy("{\"allowed_domains\":[\"a.com\"]}", 0, &st);
    CHECK(st == 0 && p && !strcmp(p, "{\"allow\":[\"a.com\"],\"deny\":[\"0.0.0.0/0\",\"::/0\"]}"));
    free(p);
    CHECK(network_policy("{\"allowed_domains\":null}", 0, &st) == NULL && st == 0);
    CHECK(network_policy("{}", 0, &st) == NULL && st == -1);
    CHECK(network_policy("{\"allowed_domains\":[\"1.2.3.4\"]}", 0, &st) == NULL && st == -1);
    CHECK(network_policy("{\"x\":1,\"allowed_domains\":null}", 0, &st) == NULL && st == -1);
    CHECK(network_policy("{}", 1, &st) == NULL && st == 0);
    p = network_policy("{\"allowOut\":[\"1.1.1.1\"],\"allow_internet_access\":false}", 1, &st);
    CHECK(st == 0 && p &&
          !strcmp(p, "{\"allow\":[\"1.1.1.1\"],\"deny\":[\"0.0.0.0/0\",\"::/0\"]}"));
    free(p);
    CHECK(network_policy("{\"denyOut\":[\"a.com\"]}", 1, &st) == NULL && st == 400);
    CHECK(network_policy("{\"egressProxy\":{\"address\":\"x\"}}", 1, &st) == NULL && st == 400);
    p = network_policy("{\"egressProxy\":{\"address\":\"p.test:1080\"}}", 1, &st);
    CHECK(st == 0 && p && strstr(p, "\"upstream\":{\"address\":\"p.test:1080\"}"));
    free(p);
    CHECK(network_policy("{\"rules\":{}}", 1, &st) == NULL && st == 0);
    CHECK(network_policy("{\"allow_internet_access\":\"no\"}", 1, &st) == NULL && st == 400);
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
    /* A deadline past a second boundary carries into tv_sec. */
    struct timespec ts = {.tv_sec = 10, .tv_nsec = 900000000L};
    clock_timespec_add_ms(&ts, 250);
    CHECK(ts.tv_sec == 11 && ts.tv_nsec == 150000000L);
    clock_timespec_add_ms(&ts, 3000);
    CHECK(ts.tv_sec == 14 && ts.tv_nsec == 150000000L);
    /* A stream entry id's time; anything else is 0, never a guess. */
    CHECK(clock_stream_id_ms("1733400000123-0") == 1733400000123LL);
    CHECK(clock_stream_id_ms("1733400000123-17") == 1733400000123LL);
    CHECK(clock_stream_id_ms("1733400000123") == 0 && clock_stream_id_ms("-5-0") == 0);
    CHECK(clock_stream_id_ms("x-0") == 0 && clock_stream_id_ms("") == 0 &&
          clock_stream_id_ms(NULL) == 0);
}

void unit_data_addr(int *total_passed, int *total_failed);
void unit_token(int *total_passed, int *total_failed);
void unit_volume(int *total_passed, int *total_failed);
void unit_worker_slot(int *total_passed, int *total_failed);
void unit_views(int *total_passed, int *total_failed);
void unit_router(int *total_passed, int *total_failed);
void unit_lifecycle(int *total_passed, int *total_failed);
void unit_query(int *total_passed, int *total_failed);
void unit_conf(int *total_passed, int *total_failed);
void unit_log(int *total_passed, int *total_failed);
void unit_rcluster(int *total_passed, int *total_failed);
void unit_handshake(int *total_passed, int *total_failed);
void unit_worker_push(int *total_passed, int *total_failed);
void unit_heartbeat(int *total_passed, int *total_failed);
void unit_workspace_limits(int *total_passed, int *total_failed);
void unit_metrics_ids(int *total_passed, int *total_failed);
void unit_sandbox_fields(int *total_passed, int *total_failed);
void unit_logs_query(int *total_passed, int *total_failed);
void unit_keys(int *total_passed, int *total_failed);
void unit_volume_create(int *total_passed, int *total_failed);
void unit_e2b_timeout(int *total_passed, int *total_failed);
void unit_e2b_network(int *total_passed, int *total_failed);
void unit_egress_audit(int *total_passed, int *total_failed);
void unit_sandbox_list(int *total_passed, int *total_failed);
void unit_snapshot_parse(int *total_passed, int *total_failed);
void unit_template_build(int *total_passed, int *total_failed);
void unit_registry_token(int *total_passed, int *total_failed);
void unit_registry_route(int *total_passed, int *total_failed);
void unit_tunnel_upgrade(int *total_passed, int *total_failed);
void unit_interp_wire(int *total_passed, int *total_failed);
void unit_interp_outputs(int *total_passed, int *total_failed);
void unit_interp_env_code(int *total_passed, int *total_failed);
void unit_interp_token(int *total_passed, int *total_failed);
void unit_secrets(int *total_passed, int *total_failed);
void unit_identity(int *total_passed, int *total_failed);

static void test_ws_limits(void)
{
    char err[200];
    long limits[WS_LIMIT_COUNT] = {500, 1024, 30000, 300};
    long ceilings[WS_LIMIT_COUNT] = {100, 4096, 20480, 60};

    CHECK(ws_limit_check(WS_LIMIT_MAX_CONCURRENT, 1000, 1000, err, sizeof(err)) == 0);
    CHECK(ws_limit_check(WS_LIMIT_MAX_CONCURRENT, 1001, 1000, err, sizeof(err)) == -1 &&
          strcmp(err, "max_concurrent_sandboxes: 1001 is above this installation's ceiling of "
                      "1000 (corral.conf ceiling_max_concurrent_sandboxes)") == 0);
    CHECK(ws_limit_check(WS_LIMIT_MAX_CONCURRENT, -1, 1000, err, sizeof(err)) == -1 &&
          strstr(err, "[0, 100000]"));
    CHECK(ws_limit_check(WS_LIMIT_MAX_CONCURRENT, 100001, 100000, err, sizeof(err)) == -1);
    /* Every limit has its ceiling (decision 0063); the range is checked first. */
    CHECK(ws_limit_check(WS_LIMIT_PIDS, 4096, 4096, err, sizeof(err)) == 0);
    CHECK(ws_limit_check(WS_LIMIT_PIDS, 4097, 4096, err, sizeof(err)) == -1 &&
          strstr(err, "sandbox_pids_limit: 4097 is above") &&
          strstr(err, "(corral.conf ceiling_sandbox_pids_limit)"));
    CHECK(ws_limit_check(WS_LIMIT_PIDS, 63, 1000, err, sizeof(err)) == -1 &&
          strstr(err, "sandbox_pids_limit: must be an integer in [64, 65536]"));
    CHECK(ws_limit_check(WS_LIMIT_DISK_MB, 1000000, 20480, err, sizeof(err)) == -1 &&
          strcmp(err, "sandbox_disk_mb: 1000000 is above this installation's ceiling of 20480 "
                      "(corral.conf ceiling_sandbox_disk_mb)") == 0);
    CHECK(ws_limit_check(WS_LIMIT_TIMEOUT, 601, 600, err, sizeof(err)) == -1 &&
          strstr(err, "(corral.conf sandbox_max_timeout_s)"));
    CHECK(ws_limit_check(WS_LIMIT_TIMEOUT, 600, 600, err, sizeof(err)) == 0);
    /* Stored above a lowered ceiling: capped; below it: kept. */
    ws_limits_cap(limits, ceilings);
    CHECK(limits[WS_LIMIT_MAX_CONCURRENT] == 100 && limits[WS_LIMIT_PIDS] == 1024 &&
          limits[WS_LIMIT_DISK_MB] == 20480 && limits[WS_LIMIT_TIMEOUT] == 60);
}

/* Writes text to a fresh mode-600 file; its path into path (a mkstemp template). */
static void write_temp(char *path, const char *text)
{
    int fd = mkstemp(path);

    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    if (fd >= 0)
        close(fd);
}

static void test_fleet_conf(void)
{
    char secret[] = "/tmp/unit-secret-XXXXXX", conf[] = "/tmp/unit-conf-XXXXXX", text[512],
         err[256];
    struct corral_conf c;

    write_temp(secret, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
    snprintf(text, sizeof(text),
             "secret_file = %s\ngateway_secret_file = %s\nredis_password_file = %s\n"
             "fleet_share = 25\nworkspace_max_concurrent_ceiling = 40\n",
             secret, secret, secret);
    write_temp(conf, text);
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == 0 && c.fleet_share == 25 &&
          c.ceilings[WS_LIMIT_MAX_CONCURRENT] == 40);
    unlink(conf);
    /* Defaults: filled before the (here absent) secret file is read. */
    (void)corral_conf_load(NULL, &c, err, sizeof(err));
    CHECK(c.fleet_share == 50 && c.ceilings[WS_LIMIT_MAX_CONCURRENT] == 100);
    for (int i = 0; i < 3; i++) {
        const char *bad[] = {"fleet_share = 0", "fleet_share = 101",
                             "workspace_max_concurrent_ceiling = 100001"};
        snprintf(conf, sizeof(conf), "/tmp/unit-conf-XXXXXX");
        snprintf(text, sizeof(text), "secret_file = %s\n%s\n", secret, bad[i]);
        write_temp(conf, text);
        CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == -1 &&
              (strstr(err, "fleet_share") || strstr(err, "workspace_max_concurrent_ceiling")));
        unlink(conf);
    }
    unlink(secret);
}

/* Env vars sealed at rest: they round-trip, and any change to the text, the
 * sandbox it is bound to or the secret makes them refuse to open. */
static void test_env_seal(void)
{
    const char *key = "0123456789abcdef0123456789abcdef", *env = "{\"TOKEN\":\"s3cr3t\"}";
    char *a = env_seal(key, "sb1", env), *b = env_seal(key, "sb1", env), *p;

    CHECK(a && b && strncmp(a, "v1.", 3) == 0 && strcmp(a, b) != 0 && !strstr(a, "s3cr3t"));
    p = a ? env_open(key, "sb1", a) : NULL;
    CHECK(p && strcmp(p, env) == 0);
    free(p);
    CHECK(a && env_open(key, "sb2", a) == NULL);
    CHECK(a && env_open("another secret, 32 characters...", "sb1", a) == NULL);
    char *t = a ? strdup(a) : NULL;
    if (t) {
        for (size_t i = 3; t[i]; i++) { /* every position altered in turn */
            char c = t[i];
            t[i] = c == 'A' ? 'B' : 'A';
            p = env_open(key, "sb1", t);
            CHECK(p == NULL);
            free(p);
            t[i] = c;
        }
        t[strlen(t) - 4] = '\0'; /* cut short */
        CHECK(env_open(key, "sb1", t) == NULL);
        free(t);
    }
    CHECK(env_open(key, "sb1", "v1.") == NULL && env_open(key, "sb1", "{\"K\":\"v\"}") == NULL);
    CHECK(env_open(key, "sb1", "v1.AAAA") == NULL && env_open(key, "sb1", "v1.!!!!") == NULL);
    free(b);
    b = env_seal(key, "sb1", "");
    p = b ? env_open(key, "sb1", b) : NULL;
    CHECK(p && *p == '\0');
    free(p);
    free(a);
    free(b);
}

int main(void)
{
    test_tokens();
    test_secrets();
    test_spec();
    test_misc();
    test_e2b_spec();
    test_egress_rule();
    test_egress_policy();
    test_network_update();
    unit_data_addr(&passed, &failed);
    unit_token(&passed, &failed);
    unit_volume(&passed, &failed);
    unit_worker_slot(&passed, &failed);
    unit_views(&passed, &failed);
    unit_router(&passed, &failed);
    unit_lifecycle(&passed, &failed);
    unit_query(&passed, &failed);
    unit_conf(&passed, &failed);
    unit_log(&passed, &failed);
    unit_rcluster(&passed, &failed);
    unit_handshake(&passed, &failed);
    unit_worker_push(&passed, &failed);
    unit_heartbeat(&passed, &failed);
    unit_workspace_limits(&passed, &failed);
    unit_metrics_ids(&passed, &failed);
    unit_sandbox_fields(&passed, &failed);
    unit_logs_query(&passed, &failed);
    unit_keys(&passed, &failed);
    unit_volume_create(&passed, &failed);
    unit_e2b_timeout(&passed, &failed);
    unit_e2b_network(&passed, &failed);
    unit_egress_audit(&passed, &failed);
    unit_sandbox_list(&passed, &failed);
    unit_snapshot_parse(&passed, &failed);
    unit_template_build(&passed, &failed);
    unit_registry_token(&passed, &failed);
    unit_registry_route(&passed, &failed);
    unit_tunnel_upgrade(&passed, &failed);
    unit_interp_wire(&passed, &failed);
    unit_interp_outputs(&passed, &failed);
    unit_interp_env_code(&passed, &failed);
    unit_interp_token(&passed, &failed);
    unit_secrets(&passed, &failed);
    unit_identity(&passed, &failed);
    test_ws_limits();
    test_fleet_conf();
    test_env_seal();
    return CHECK_SUMMARY();
}
