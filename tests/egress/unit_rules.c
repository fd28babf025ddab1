/* Unit tests of what interception added: header rules (matching, order,
 * refusals), placeholders, config files in both forms, the resolver's
 * question, SOCKS5 messages, head edits and inner request heads. Counted
 * with unit_egress.c's totals; run from its main. */
#include "egress/http_edit.h"
#include "egress/http_head.h"
#include "egress/placeholder.h"
#include "egress/resolver.h"
#include "egress/rules.h"
#include "egress/settings.h"
#include "egress/socks5_wire.h"
#include "egress/transform.h"

#include "unit_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void test_rules_all(void);

/* rules_parse of a JSON text: 0 or -1; err is kept for the caller. */
static int rules_from(const char *json, struct rules *r, char *err, size_t errlen)
{
    json_t *j = json_loads(json, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
    int rc = j ? rules_parse(j, r, err, errlen) : -1;
    if (!j)
        snprintf(err, errlen, "test: not JSON");
    json_decref(j);
    return rc;
}

static int rules_ok(const char *json)
{
    struct rules r;
    char err[256] = "";
    int rc = rules_from(json, &r, err, sizeof(err));
    if (rc == 0)
        rules_free(&r);
    else
        CHECK(err[0] != '\0');
    return rc == 0;
}

static const char *first_header(const struct rules *r, const char *host)
{
    const struct rule_set *s = rules_match(r, host);
    return s && s->n ? s->h[0].name : NULL;
}

static void test_rules_match(void)
{
    struct rules r;
    char err[256];

    CHECK(rules_from("{\"api.example.com\":[{\"headers\":{\"A\":\"1\"}}],"
                     "\"*.example.com\":[{\"headers\":{\"B\":\"2\"}}],"
                     "\"*.deep.example.com\":[{\"headers\":{\"C\":\"3\"}}]}",
                     &r, err, sizeof(err)) == 0);
    const char *a = first_header(&r, "api.example.com");
    CHECK(a && strcmp(a, "A") == 0);                   /* exact wins */
    CHECK(rules_match(&r, "api.example.com")->n == 1); /* lists are not merged */
    a = first_header(&r, "x.example.com");
    CHECK(a && strcmp(a, "B") == 0);
    a = first_header(&r, "a.b.c.example.com"); /* any depth */
    CHECK(a && strcmp(a, "B") == 0);
    a = first_header(&r, "x.deep.example.com"); /* the longest suffix */
    CHECK(a && strcmp(a, "C") == 0);
    a = first_header(&r, "deep.example.com"); /* *.deep's apex: *.example.com's */
    CHECK(a && strcmp(a, "B") == 0);
    CHECK(!rules_match(&r, "example.com")); /* the apex is not matched */
    CHECK(!rules_match(&r, "notexample.com"));
    CHECK(!rules_match(&r, "example.com.evil.test"));
    rules_free(&r);
}

static void test_rules_order(void)
{
    struct rules r;
    char err[256];

    CHECK(rules_from("{\"a.test\":[{\"headers\":{\"X-One\":\"1\",\"X-Two\":\"2\"}},"
                     "{\"headers\":{\"x-one\":\"later\"}},{\"headers\":{}}]}",
                     &r, err, sizeof(err)) == 0);
    const struct rule_set *s = rules_match(&r, "a.test");
    CHECK(s && s->n == 2);
    CHECK(s && strcmp(s->h[0].value, "later") == 0 && strcmp(s->h[1].value, "2") == 0);
    rules_free(&r);
}

static void test_rules_refused(void)
{
    CHECK(rules_ok("{}"));
    CHECK(rules_ok("{\"a.test\":[]}"));
    CHECK(rules_ok("{\"a.test\":[{\"headers\":{\"X\":\"${HOME} $x {e2b.secrets.y}\"}}]}"));
    CHECK(rules_ok("{\"a.test\":[{\"headers\":{\"X\":\"tab\\there\"}}]}"));
    CHECK(rules_ok("{\"198.51.100.7\":[{\"headers\":{\"X\":\"1\"}}]}"));
    static const char *const bad[] = {
        "[]",
        "{\"*\":[{\"headers\":{\"X\":\"1\"}}]}",
        "{\"*.\":[]}",
        "{\"Api.Example.com\":[]}",
        "{\"a.*.example.com\":[]}",
        "{\"a.test.\":[]}",
        "{\"a.test\":{\"headers\":{}}}",
        "{\"a.test\":[{\"header\":{}}]}",
        "{\"a.test\":[{\"headers\":[]}]}",
        "{\"a.test\":[{\"headers\":{\"Bad Name\":\"1\"}}]}",
        "{\"a.test\":[{\"headers\":{\"\":\"1\"}}]}",
        "{\"a.test\":[{\"headers\":{\"X:Y\":\"1\"}}]}",
        "{\"a.test\":[{\"headers\":{\"X\":\"a\\r\\nInjected: 1\"}}]}",
        "{\"a.test\":[{\"headers\":{\"X\":\"a\\nb\"}}]}",
        "{\"a.test\":[{\"headers\":{\"X\":\"a\\u0000b\"}}]}",
        "{\"a.test\":[{\"headers\":{\"X\":1}}]}",
        "{\"a.test\":[{\"headers\":{\"Content-Length\":\"1\"}}]}",
        "{\"a.test\":[{\"headers\":{\"transfer-encoding\":\"chunked\"}}]}",
        "{\"a.test\":[{\"headers\":{\"Host\":\"other.test\"}}]}",
        "{\"a.test\":[{\"headers\":{\"X\":\"${e2b.secrets.}\"}}]}",
        "{\"a.test\":[{\"headers\":{\"X\":\"${e2b.secret.x}\"}}]}",
        "{\"a.test\":[{\"headers\":{\"X\":\"${e2b.secrets.a b}\"}}]}",
        "{\"a.test\":[{\"headers\":{\"X\":\"${e2b.secrets.x\"}}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (rules_ok(bad[i])) {
            CHECK(!"a bad rule was accepted");
            fprintf(stderr, "  accepted: %s\n", bad[i]);
        }
}

static const char *fake_lookup(void *ctx, enum ph_kind kind, const char *name)
{
    (void)ctx;
    if (kind == PH_SECRET && strcmp(name, "openai") == 0)
        return "sk-123";
    if (kind == PH_TOKEN && strcmp(name, "aws") == 0)
        return "eyJ";
    return NULL;
}

static void test_placeholders(void)
{
    struct ph_ref refs[PH_REFS_MAX], missing;
    char name128[PH_NAME_MAX + 1], v[PH_NAME_MAX + 64];

    CHECK(ph_scan("plain", refs, PH_REFS_MAX) == 0);
    CHECK(ph_scan("Bearer ${e2b.secrets.openai}", refs, PH_REFS_MAX) == 1 &&
          refs[0].kind == PH_SECRET && strcmp(refs[0].name, "openai") == 0);
    CHECK(ph_scan("${e2b.identity.tokens.aws}-${e2b.secrets.a.b_c-9}", refs, PH_REFS_MAX) == 2 &&
          refs[0].kind == PH_TOKEN && strcmp(refs[1].name, "a.b_c-9") == 0);
    memset(name128, 'n', PH_NAME_MAX);
    name128[PH_NAME_MAX] = '\0';
    snprintf(v, sizeof(v), "${e2b.secrets.%s}", name128);
    CHECK(ph_scan(v, refs, PH_REFS_MAX) == 1);
    snprintf(v, sizeof(v), "${e2b.secrets.%sn}", name128);
    CHECK(ph_scan(v, refs, PH_REFS_MAX) == -1);
    CHECK(ph_scan("${e2b.secrets.a}${e2b.secrets.b}", refs, 1) == -1);

    char *out = ph_expand("Bearer ${e2b.secrets.openai} t=${e2b.identity.tokens.aws};", fake_lookup,
                          NULL, &missing);
    CHECK(out && strcmp(out, "Bearer sk-123 t=eyJ;") == 0);
    free(out);
    out = ph_expand("${HOME}", fake_lookup, NULL, &missing);
    CHECK(out && strcmp(out, "${HOME}") == 0);
    free(out);
    out = ph_expand("a ${e2b.secrets.openai} ${e2b.secrets.gone}", fake_lookup, NULL, &missing);
    CHECK(!out && missing.kind == PH_SECRET && strcmp(missing.name, "gone") == 0);
    out = ph_expand("${e2b.identity.tokens.openai}", fake_lookup, NULL, &missing);
    CHECK(!out && missing.kind == PH_TOKEN); /* kinds are separate namespaces */
}

static int file_ok(const char *text, struct settings *s, char *err, size_t errlen)
{
    int rc = settings_from_file(text, s, err, errlen);
    if (rc != 0)
        CHECK(err[0] != '\0');
    return rc == 0;
}

static void test_config_file(void)
{
    struct settings s;
    char err[256];

    CHECK(file_ok("  {\"sandbox\":\"sb1\",\n \"policy\":{\"allow\":[\"api.example.com\"],"
                  "\"deny\":[\"0.0.0.0/0\"],\"rules\":{\"api.example.com\":[{\"headers\":"
                  "{\"Authorization\":\"Bearer ${e2b.secrets.openai}\",\"X-Lit\":\"v\"}}]},"
                  "\"upstream\":{\"address\":\"socks.example.com:1080\",\"username\":\"u\","
                  "\"password\":\"p\"}},\"ca_cert\":\"/ca.pem\",\"ca_key\":\"/ca.key\","
                  "\"roots\":\"/roots.pem\",\"resolver\":\"/run/resolve.sock\"}\n",
                  &s, err, sizeof(err)));
    CHECK(strcmp(s.sandbox, "sb1") == 0 && s.policy.deny_all && s.rules.n == 1 && s.upstream.set &&
          s.upstream.port == 1080 && strcmp(s.upstream.user, "u") == 0 &&
          strcmp(s.roots, "/roots.pem") == 0 && strcmp(s.resolver, "/run/resolve.sock") == 0);
    settings_free(&s);
    CHECK(file_ok("{\"sandbox\":\"sb2\",\"policy\":{}}", &s, err, sizeof(err)) &&
          strcmp(s.roots, DEFAULT_ROOTS) == 0 && !s.upstream.set && s.resolver[0] == '\0');
    settings_free(&s);
    CHECK(file_ok("sb3\n{\"allow\":[\"a.test\"],\"upstream\":{\"address\":\"[2001:db8::1]:1080\"}}",
                  &s, err, sizeof(err)) &&
          strcmp(s.sandbox, "sb3") == 0 && s.upstream.set && s.upstream.user[0] == '\0');
    settings_free(&s);
    static const char *const bad[] = {
        "{\"policy\":{}}",
        "{\"sandbox\":\"s\"}",
        "{\"sandbox\":\"a b\",\"policy\":{}}",
        "{\"sandbox\":\"s\",\"policy\":{},\"extra\":1}",
        "{\"sandbox\":\"s\",\"policy\":{\"allowed\":[]}}",
        "{\"sandbox\":\"s\",\"policy\":{},\"roots\":\"relative.pem\"}",
        "{\"sandbox\":\"s\",\"policy\":{\"rules\":{\"a.test\":[{\"headers\":{\"X\":\"1\"}}]}}}",
        "{\"sandbox\":\"s\",\"policy\":{\"rules\":{\"a.test\":[]}},\"ca_cert\":\"/c\"}",
        "{\"sandbox\":\"s\",\"policy\":{\"upstream\":{\"address\":\"nohost\"}}}",
        "{\"sandbox\":\"s\",\"policy\":{\"upstream\":{\"address\":\"h.test:0\"}}}",
        "{\"sandbox\":\"s\",\"policy\":{\"upstream\":{\"address\":\"::1:1080\"}}}",
        "{\"sandbox\":\"s\",\"policy\":{\"upstream\":{\"address\":\"h.t:1\",\"username\":\"u\"}}}",
        "{\"sandbox\":\"s\",\"policy\":{\"upstream\":{\"username\":\"u\",\"password\":\"p\"}}}",
        "{\"sandbox\":\"s\",\"policy\":{\"upstream\":{\"address\":\"h.test:1\",\"port\":1}}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (file_ok(bad[i], &s, err, sizeof(err))) {
            CHECK(!"a bad config was accepted");
            fprintf(stderr, "  accepted: %s\n", bad[i]);
            settings_free(&s);
        }
}

/* Refusals name keys, never values: a secret in a config file stays out of
 * the log even when the file is wrong around it. */
static void test_config_errors_hold_no_values(void)
{
    struct settings s;
    char err[256];
    static const char *const bad[] = {
        "{\"sandbox\":\"s\",\"policy\":{\"rules\":{\"a.test\":[{\"headers\":"
        "{\"X\":\"SECRETVALUE\\r\\n\"}}]}},\"ca_cert\":\"/c\",\"ca_key\":\"/k\"}",
        "{\"sandbox\":\"s\",\"policy\":{\"rules\":{\"a.test\":[{\"headers\":{\"X\":\"SECRETVALUE",
        "{\"sandbox\":\"s\",\"policy\":{\"rules\":{\"a.test\":[{\"headers\":{\"X\":SECRETVALUE}}]}}"
        "}",
        "s\n{\"rules\":{\"a.test\":[{\"headers\":{\"X\":SECRETVALUE}}]}}",
        "{\"sandbox\":\"s\",\"policy\":{\"upstream\":{\"address\":\"h.test:1\","
        "\"password\":\"SECRETVALUE\"}}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CHECK(settings_from_file(bad[i], &s, err, sizeof(err)) != 0);
        CHECK(err[0] && !strstr(err, "SECRET"));
        if (strstr(err, "SECRET"))
            fprintf(stderr, "  said: %s\n", err);
    }
}

static void test_socks5_wire(void)
{
    unsigned char m[SOCKS5_MSG_MAX];
    struct ipaddr v4, v6;
    size_t rest = 0;

    CHECK(socks5_greeting(m, true) == 3 && m[0] == 5 && m[1] == 1 && m[2] == 2);
    CHECK(socks5_greeting(m, false) == 3 && m[2] == 0);
    CHECK(socks5_method_check((const unsigned char[]){5, 2}, true) == NULL);
    CHECK(socks5_method_check((const unsigned char[]){5, 0xff}, true) != NULL);
    CHECK(socks5_method_check((const unsigned char[]){5, 0}, true) != NULL);
    CHECK(socks5_method_check((const unsigned char[]){4, 0}, false) != NULL);
    CHECK(socks5_auth(m, "user", "pw") == 9 && m[0] == 1 && m[1] == 4 && m[6] == 2 &&
          memcmp(m + 7, "pw", 2) == 0);
    CHECK(socks5_auth_check((const unsigned char[]){1, 0}) == NULL);
    CHECK(socks5_auth_check((const unsigned char[]){1, 1}) != NULL);
    CHECK(socks5_connect(m, "api.test", NULL, 443) == 4 + 1 + 8 + 2 && m[1] == 1 && m[3] == 3 &&
          m[4] == 8 && memcmp(m + 5, "api.test", 8) == 0 && m[13] == 1 && m[14] == 0xbb);
    ipaddr_parse("198.51.100.7", &v4);
    CHECK(socks5_connect(m, NULL, &v4, 80) == 10 && m[3] == 1 && m[4] == 198 && m[9] == 80);
    ipaddr_parse("2001:db8::1", &v6);
    CHECK(socks5_connect(m, NULL, &v6, 80) == 22 && m[3] == 4 && m[4] == 0x20);
    CHECK(socks5_reply_check((const unsigned char[]){5, 0, 0, 1, 0}, &rest) == NULL && rest == 5);
    CHECK(socks5_reply_check((const unsigned char[]){5, 0, 0, 3, 9}, &rest) == NULL && rest == 11);
    CHECK(socks5_reply_check((const unsigned char[]){5, 0, 0, 4, 0}, &rest) == NULL && rest == 17);
    const char *why = socks5_reply_check((const unsigned char[]){5, 5, 0, 1, 0}, &rest);
    CHECK(why && strstr(why, "refused"));
    CHECK(socks5_reply_check((const unsigned char[]){5, 0, 0, 7, 0}, &rest) != NULL);
}

static void test_head_edit(void)
{
    static const char head[] = "GET /x HTTP/1.1\r\nHost: a.test\r\nauthorization: client\r\n"
                               "Accept: */*\r\nAUTHORIZATION: again\r\n\r\n";
    const char *names[] = {"Authorization", "X-Lit"}, *values[] = {"Bearer s", "v"};
    size_t len;
    char *out = http_head_set(head, sizeof(head) - 1, names, values, 2, &len);

    CHECK(out &&
          len == strlen("GET /x HTTP/1.1\r\nHost: a.test\r\nAccept: */*\r\n"
                        "Authorization: Bearer s\r\nX-Lit: v\r\n\r\n") &&
          memcmp(out,
                 "GET /x HTTP/1.1\r\nHost: a.test\r\nAccept: */*\r\n"
                 "Authorization: Bearer s\r\nX-Lit: v\r\n\r\n",
                 len) == 0);
    free(out);

    struct http_req r;
    const char *why;
    static const char inner[] = "POST /up?q=1 HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n"
                                "Upgrade: websocket\r\n\r\n";
    CHECK(http_head_parse_inner(inner, sizeof(inner) - 1, &r, &why) == 0 && r.kind == HTTP_ORIGIN &&
          r.framing == FRAMING_LENGTH && r.content_length == 3 && r.upgrade && r.path_len == 7 &&
          memcmp(inner + r.path_off, "/up?q=1", 7) == 0);
    static const char star[] = "OPTIONS * HTTP/1.1\r\n\r\n";
    CHECK(http_head_parse_inner(star, sizeof(star) - 1, &r, &why) == 0);
    static const char *const bad[] = {"GET http://b.test/ HTTP/1.1\r\n\r\n",
                                      "CONNECT b.test:443 HTTP/1.1\r\n\r\n",
                                      "GET * HTTP/1.1\r\n\r\n", "GET x HTTP/1.1\r\n\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK(http_head_parse_inner(bad[i], strlen(bad[i]), &r, &why) != 0);
    static const char outer[] = "GET /x HTTP/1.1\r\n\r\n";
    CHECK(http_head_parse(outer, sizeof(outer) - 1, &r, &why) != 0); /* a proxy wants absolute */
}

static void test_transform(void)
{
    struct rules r;
    char err[256], msg[512], *out = NULL;
    size_t len;
    static const char head[] = "GET / HTTP/1.1\r\nHost: a.test\r\nX-Lit: mine\r\n\r\n";

    CHECK(rules_from("{\"a.test\":[{\"headers\":{\"x-lit\":\"v\"}}],"
                     "\"b.test\":[{\"headers\":{\"A\":\"Bearer ${e2b.secrets.openai}\"}}]}",
                     &r, err, sizeof(err)) == 0);
    /* Literal values need no resolver. */
    CHECK(transform_head(rules_match(&r, "a.test"), "", "a.test", head, sizeof(head) - 1, &out,
                         &len, msg, sizeof(msg)) == 0 &&
          len == sizeof(head) - 1 - strlen("X-Lit: mine\r\n") + strlen("x-lit: v\r\n"));
    free(out);
    /* No resolver: refused, naming the placeholder. */
    CHECK(transform_head(rules_match(&r, "b.test"), "", "b.test", head, sizeof(head) - 1, &out,
                         &len, msg, sizeof(msg)) != 0 &&
          strstr(msg, "${e2b.secrets.openai}") && strstr(msg, "no resolver"));
    CHECK(transform_head(rules_match(&r, "b.test"), "/nonexistent/resolve.sock", "b.test", head,
                         sizeof(head) - 1, &out, &len, msg, sizeof(msg)) != 0 &&
          strstr(msg, "openai"));
    rules_free(&r);

    struct ph_ref refs[3] = {{PH_SECRET, "a"}, {PH_TOKEN, "aws"}, {PH_SECRET, "a"}};
    char *q = resolver_question("api.test", refs, 3);
    CHECK(q && strcmp(q, "{\"host\":\"api.test\",\"secrets\":[\"a\"],\"tokens\":[\"aws\"]}") == 0);
    free(q);
    json_t *ans = json_loads("{\"secrets\":{\"a\":\"v\",\"b\":\"x\\r\\ny\",\"c\":1}}", 0, NULL);
    CHECK(resolver_value(ans, PH_SECRET, "a") && !resolver_value(ans, PH_SECRET, "b") &&
          !resolver_value(ans, PH_SECRET, "c") && !resolver_value(ans, PH_TOKEN, "a"));
    json_decref(ans);
}

void test_rules_all(void)
{
    test_rules_match();
    test_rules_order();
    test_rules_refused();
    test_placeholders();
    test_config_file();
    test_config_errors_hold_no_values();
    test_socks5_wire();
    test_head_edit();
    test_transform();
}
