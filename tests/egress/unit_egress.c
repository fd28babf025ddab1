/* Unit tests of corral-egress's pure parts: the policy (parse and match), the
 * decision, the blocked ranges, request heads and body framing, flags. Prints "N passed, N
 * failed". */
#include "check.h"
#include "egress/addr_class.h"
#include "egress/decide.h"
#include "egress/egress_conf.h"
#include "egress/http_body.h"
#include "egress/http_head.h"
#include "egress/hostname.h"
#include "egress/ipaddr.h"
#include "egress/policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CHECK_COUNTERS;

/* unit_rules.c: header rules, placeholders, config files, SOCKS5 messages;
 * it counts into the same totals. */
void test_rules_all(void);
void test_audit_all(void); /* unit_audit.c */
int *unit_passed(void);
int *unit_failed(void);
int *unit_passed(void)
{
    return &passed;
}
int *unit_failed(void)
{
    return &failed;
}

static struct ipaddr ip(const char *s)
{
    struct ipaddr a;
    if (ipaddr_parse(s, &a) != 0) {
        fprintf(stderr, "test bug: bad literal %s\n", s);
        exit(1);
    }
    return a;
}

/* Blocked-range test without folding, so mapped forms reach addr_class raw. */
static int blocked_raw6(const char *s)
{
    struct ipaddr a = {.family = AF_INET6};
    if (inet_pton(AF_INET6, s, a.b) != 1) {
        fprintf(stderr, "test bug: bad v6 %s\n", s);
        exit(1);
    }
    return addr_is_blocked(&a);
}

static int blocked(const char *s)
{
    struct ipaddr a = ip(s);
    return addr_is_blocked(&a);
}

static int parses(const char *json)
{
    struct policy p;
    char err[256] = "";
    int rc = policy_parse(json, &p, err, sizeof(err));
    if (rc == 0)
        policy_free(&p);
    else
        CHECK(err[0] != '\0'); /* every refusal says why */
    return rc == 0;
}

static void test_policy_parse(void)
{
    CHECK(parses("{}"));
    CHECK(parses("{\"allow\": [], \"deny\": []}"));
    CHECK(
        parses("{\"allow\": [\"api.example.com\", \"*.example.com\", \"198.51.100.10\", "
               "\"2001:db8::1\", \"10.1.0.0/16\", \"2001:db8::/32\"], \"deny\": [\"0.0.0.0/0\"]}"));
    CHECK(parses("{\"allow\": [\"API.Example.COM\"]}"));
    CHECK(!parses("{\"allow\": [\"example.com.\"]}")); /* as corral-api reads entries */
    CHECK(!parses(""));
    CHECK(!parses("[]"));
    CHECK(!parses("{\"allow\": \"example.com\"}"));
    CHECK(!parses("{\"allow\": [42]}"));
    CHECK(!parses("{\"allowed\": []}"));
    CHECK(!parses("{\"allow\": [\"bad host\"]}"));
    CHECK(!parses("{\"allow\": [\"*\"]}"));
    CHECK(!parses("{\"allow\": [\"*.\"]}"));
    CHECK(!parses("{\"allow\": [\"a.*.example.com\"]}"));
    CHECK(!parses("{\"allow\": [\"10.0.0.0/33\"]}"));
    CHECK(!parses("{\"allow\": [\"2001:db8::/129\"]}"));
    CHECK(!parses("{\"allow\": [\"10.0.0.0/\"]}"));
    CHECK(!parses("{\"allow\": [\"10.0.0.0/-1\"]}"));
    CHECK(!parses("{\"allow\": [\"example..com\"]}"));
    CHECK(!parses("{\"allow\": [\"\"]}"));
    CHECK(!parses("{\"allow\": [\"127.1\"]}")); /* not a literal, and not a name either */
    CHECK(!parses("{\"allow\": [], \"allow\": []}"));
    CHECK(!parses("{\"allow\": [\"a\\u0000b.com\"]}"));

    struct policy p;
    char err[256];
    CHECK(policy_parse("{\"deny\": [\"0.0.0.0/0\"]}", &p, err, sizeof(err)) == 0 && p.deny_all);
    policy_free(&p);
    CHECK(policy_parse("{\"deny\": [\"::/0\"]}", &p, err, sizeof(err)) == 0 && p.deny_all);
    policy_free(&p);
    CHECK(policy_parse("{\"deny\": [\"0.0.0.0/1\"]}", &p, err, sizeof(err)) == 0 && !p.deny_all);
    policy_free(&p);
    CHECK(policy_parse("{\"allow\": [\"0.0.0.0/0\"]}", &p, err, sizeof(err)) == 0 && !p.deny_all);
    policy_free(&p);
    CHECK(policy_parse("{\"allow\": [\"x y\"]}", &p, err, sizeof(err)) != 0 &&
          strstr(err, "\"allow\"[0]") != NULL);
}

static struct policy pol(const char *json)
{
    struct policy p;
    char err[256];
    if (policy_parse(json, &p, err, sizeof(err)) != 0) {
        fprintf(stderr, "test bug: %s\n", err);
        exit(1);
    }
    return p;
}

static int name_in(const struct plist *l, const char *host)
{
    char n[HOSTNAME_MAX + 1];
    return hostname_normalize(host, n) == 0 && policy_name_in(l, n);
}

static void test_policy_match(void)
{
    struct policy p = pol("{\"allow\": [\"api.example.com\", \"*.Example.ORG\"], "
                          "\"deny\": [\"198.51.100.0/24\", \"2001:db8::/32\", \"203.0.113.7\"]}");

    CHECK(name_in(&p.allow, "api.example.com"));
    CHECK(name_in(&p.allow, "API.EXAMPLE.COM"));
    CHECK(name_in(&p.allow, "api.example.com."));
    CHECK(!name_in(&p.allow, "api.example.com.."));
    CHECK(!name_in(&p.allow, "x.api.example.com")); /* exact means exact */
    CHECK(!name_in(&p.allow, "example.com"));
    CHECK(!name_in(&p.allow, "api.example.co"));
    CHECK(name_in(&p.allow, "a.example.org"));
    CHECK(name_in(&p.allow, "a.b.c.example.org")); /* any depth */
    CHECK(name_in(&p.allow, "A.Example.Org."));
    CHECK(!name_in(&p.allow, "example.org")); /* not the apex */
    CHECK(!name_in(&p.allow, "badexample.org"));
    CHECK(!name_in(&p.allow, "example.org.evil.test"));

    struct ipaddr a = ip("198.51.100.0"), b = ip("198.51.100.255"), c = ip("198.51.101.0");
    CHECK(policy_addr_in(&p.deny, &a) && policy_addr_in(&p.deny, &b) &&
          !policy_addr_in(&p.deny, &c));
    a = ip("2001:db8::1");
    b = ip("2001:db8:ffff:ffff::1");
    c = ip("2001:db9::1");
    CHECK(policy_addr_in(&p.deny, &a) && policy_addr_in(&p.deny, &b) &&
          !policy_addr_in(&p.deny, &c));
    a = ip("203.0.113.7");
    b = ip("203.0.113.8");
    CHECK(policy_addr_in(&p.deny, &a) && !policy_addr_in(&p.deny, &b));
    a = ip("::ffff:198.51.100.9"); /* mapped: judged as the IPv4 address */
    CHECK(a.family == AF_INET && policy_addr_in(&p.deny, &a));
    CHECK(!policy_addr_in(&p.allow, &a)); /* name entries never match an address */
    policy_free(&p);

    p = pol("{\"allow\": [\"10.1.0.0/16\"]}");
    a = ip("10.1.255.255");
    b = ip("10.2.0.0");
    CHECK(policy_addr_in(&p.allow, &a) && !policy_addr_in(&p.allow, &b));
    policy_free(&p);
    p = pol("{\"allow\": [\"198.51.100.128/25\"]}"); /* a prefix not on a byte boundary */
    a = ip("198.51.100.128");
    b = ip("198.51.100.127");
    CHECK(policy_addr_in(&p.allow, &a) && !policy_addr_in(&p.allow, &b));
    policy_free(&p);
}

static void test_decide_literal(void)
{
    struct policy open = pol("{}");
    struct policy deny_all =
        pol("{\"allow\": [\"198.51.100.10\", \"2001:db8::/32\", \"example.com\"],"
            " \"deny\": [\"0.0.0.0/0\"]}");
    struct policy both = pol("{\"allow\": [\"198.51.100.10\"], \"deny\": [\"198.51.100.0/24\"]}");
    struct ipaddr a;

    a = ip("198.51.100.10");
    CHECK(decide_literal(&open, &a) == V_ALLOW);
    CHECK(decide_literal(&deny_all, &a) == V_ALLOW);
    CHECK(decide_literal(&both, &a) == V_ALLOW); /* allow beats deny */
    a = ip("198.51.100.11");
    CHECK(decide_literal(&open, &a) == V_ALLOW);
    CHECK(decide_literal(&deny_all, &a) == V_DENY_LITERAL);
    CHECK(decide_literal(&both, &a) == V_DENY_LITERAL);
    a = ip("2001:db8::5");
    CHECK(decide_literal(&deny_all, &a) == V_ALLOW);
    a = ip("2606:4700::1"); /* deny-all covers IPv6 too */
    CHECK(decide_literal(&deny_all, &a) == V_DENY_LITERAL);
    CHECK(decide_literal(&open, &a) == V_ALLOW);
    a = ip("127.0.0.1"); /* blocked whatever the policy */
    CHECK(decide_literal(&open, &a) == V_DENY_PRIVATE);
    struct policy allow_private = pol("{\"allow\": [\"10.0.0.0/8\", \"127.0.0.1\"]}");
    CHECK(decide_literal(&allow_private, &a) == V_DENY_PRIVATE);
    a = ip("10.1.2.3");
    CHECK(decide_literal(&allow_private, &a) == V_DENY_PRIVATE);
    policy_free(&allow_private);
    policy_free(&open);
    policy_free(&deny_all);
    policy_free(&both);
}

static void test_decide_name(void)
{
    struct policy open = pol("{\"deny\": [\"evil.test\", \"*.evil.test\", \"203.0.113.0/24\"]}");
    struct policy deny_all = pol("{\"allow\": [\"*.example.com\"], \"deny\": [\"0.0.0.0/0\"]}");
    struct policy deny_all_cidr =
        pol("{\"allow\": [\"198.51.100.0/24\"], \"deny\": [\"0.0.0.0/0\"]}");
    struct policy allow_over = pol("{\"allow\": [\"ok.evil.test\"], \"deny\": [\"*.evil.test\"]}");
    struct ipaddr pub[2] = {ip("198.51.100.10"), ip("2001:db8::10")};
    struct ipaddr mixed[2] = {ip("198.51.100.10"), ip("203.0.113.5")};
    struct ipaddr priv[2] = {ip("198.51.100.10"), ip("169.254.169.254")};
    struct ipaddr ok[2];
    size_t n_ok;

    CHECK(decide_name_early(&open, "evil.test") == V_DENY_NAME);
    CHECK(decide_name_early(&open, "a.b.evil.test") == V_DENY_NAME);
    CHECK(decide_name_early(&open, "good.test") == V_RESOLVE);
    CHECK(decide_name_addrs(&open, V_RESOLVE, pub, 2, ok, &n_ok) == V_ALLOW && n_ok == 2);
    /* Only the addresses the policy allows are dialled. */
    CHECK(decide_name_addrs(&open, V_RESOLVE, mixed, 2, ok, &n_ok) == V_ALLOW && n_ok == 1 &&
          ok[0].b[3] == 10);
    CHECK(decide_name_addrs(&open, V_RESOLVE, mixed + 1, 1, ok, &n_ok) == V_DENY_NAME && n_ok == 0);
    /* One private address refuses the name (DNS rebinding, split answers). */
    CHECK(decide_name_addrs(&open, V_RESOLVE, priv, 2, ok, &n_ok) == V_DENY_PRIVATE && n_ok == 0);
    CHECK(decide_name_addrs(&open, V_RESOLVE, pub, 0, ok, &n_ok) == V_CANNOT_RESOLVE);
    CHECK(decide_name_addrs(&open, V_DENY_NAME, pub, 2, ok, &n_ok) == V_DENY_NAME && n_ok == 0);

    CHECK(decide_name_early(&deny_all, "api.example.com") == V_ALLOW);
    CHECK(decide_name_early(&deny_all, "example.com") == V_DENY_NAME); /* no resolving at all */
    CHECK(decide_name_early(&deny_all, "other.test") == V_DENY_NAME);
    CHECK(decide_name_addrs(&deny_all, V_ALLOW, pub, 2, ok, &n_ok) == V_ALLOW && n_ok == 2);
    CHECK(decide_name_addrs(&deny_all, V_ALLOW, priv, 2, ok, &n_ok) == V_DENY_PRIVATE);

    CHECK(decide_name_early(&deny_all_cidr, "any.test") == V_RESOLVE);
    CHECK(decide_name_addrs(&deny_all_cidr, V_RESOLVE, pub, 2, ok, &n_ok) == V_ALLOW && n_ok == 1 &&
          ok[0].family == AF_INET); /* the AAAA answer is not allowed */
    CHECK(decide_name_addrs(&deny_all_cidr, V_RESOLVE, mixed + 1, 1, ok, &n_ok) == V_DENY_NAME);

    CHECK(decide_name_early(&allow_over, "ok.evil.test") == V_ALLOW); /* allow beats deny */
    CHECK(decide_name_early(&allow_over, "x.evil.test") == V_DENY_NAME);
    policy_free(&open);
    policy_free(&deny_all);
    policy_free(&deny_all_cidr);
    policy_free(&allow_over);
}

static void test_blocked_v4(void)
{
    static const char *const edges[][4] = {
        /* first, last of the range; the addresses just outside it */
        {"0.0.0.0", "0.255.255.255", NULL, "1.0.0.0"},
        {"10.0.0.0", "10.255.255.255", "9.255.255.255", "11.0.0.0"},
        {"100.64.0.0", "100.127.255.255", "100.63.255.255", "100.128.0.0"},
        {"127.0.0.0", "127.255.255.255", "126.255.255.255", "128.0.0.0"},
        {"169.254.0.0", "169.254.255.255", "169.253.255.255", "169.255.0.0"},
        {"172.16.0.0", "172.31.255.255", "172.15.255.255", "172.32.0.0"},
        {"192.168.0.0", "192.168.255.255", "192.167.255.255", "192.169.0.0"},
        {"192.0.0.0", "192.0.0.255", "191.255.255.255", "192.0.1.0"},
        {"198.18.0.0", "198.19.255.255", "198.17.255.255", "198.20.0.0"},
        {"224.0.0.0", "255.255.255.255", "223.255.255.255", NULL},
    };
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        CHECK(blocked(edges[i][0]));
        CHECK(blocked(edges[i][1]));
        if (edges[i][2])
            CHECK(!blocked(edges[i][2]));
        if (edges[i][3])
            CHECK(!blocked(edges[i][3]));
    }
    CHECK(blocked("240.0.0.1"));
    CHECK(!blocked("192.0.2.1") && !blocked("198.51.100.10") && !blocked("203.0.113.1"));
    CHECK(!blocked("8.8.8.8"));
}

static void test_blocked_v6(void)
{
    CHECK(blocked("::") && blocked("::1"));
    CHECK(blocked("fc00::") && blocked("fdff:ffff::1") && !blocked("fbff:ffff::1"));
    CHECK(!blocked("fe00::1"));
    CHECK(blocked("fe80::1") && blocked("febf:ffff::1"));
    CHECK(blocked("fec0::1"));
    CHECK(blocked("ff00::") && blocked("ff02::1") && blocked("ffff:ffff::"));
    CHECK(!blocked("2001:db8::1") && !blocked("2606:4700::1111"));
    /* IPv4-mapped: folded on parse, and judged by addr_class if it arrives raw. */
    CHECK(blocked("::ffff:127.0.0.1") && blocked("::ffff:10.0.0.1"));
    CHECK(!blocked("::ffff:198.51.100.10"));
    CHECK(blocked_raw6("::ffff:169.254.169.254") && !blocked_raw6("::ffff:198.51.100.10"));
    /* NAT64 64:ff9b::/96: the embedded IPv4 decides. */
    CHECK(blocked("64:ff9b::a9fe:a9fe") && blocked("64:ff9b::7f00:1"));
    CHECK(!blocked("64:ff9b::c633:640a")); /* 198.51.100.10 */
    /* 6to4 2002::/16: bytes 2-5 are the IPv4 address. */
    CHECK(blocked("2002:0a00:0001::1") && blocked("2002:c0a8:0101::"));
    CHECK(!blocked("2002:c633:640a::1"));
    /* IPv4-compatible ::/96. */
    CHECK(blocked("::127.0.0.1") && blocked("::10.0.0.1") && !blocked("::198.51.100.10"));
}

/* A CIDR entry as the proxy reads it: common/egress_rule.c, then its network. */
static int cidr(const char *s, struct ipaddr *net, int *bits)
{
    struct egress_rule r;

    if (egress_rule_parse(s, &r) != 0 || r.kind != EGRESS_RULE_CIDR)
        return -1;
    ipaddr_from_rule(&r, net, bits);
    return 0;
}

static void test_ipaddr(void)
{
    struct ipaddr a, net;
    int bits;
    char buf[IPADDR_STRLEN];

    CHECK(ipaddr_parse("127.1", &a) != 0);
    CHECK(ipaddr_parse("0x7f.0.0.1", &a) != 0);
    CHECK(ipaddr_parse("2130706433", &a) != 0);
    CHECK(ipaddr_parse("fe80::1%eth0", &a) != 0);
    CHECK(ipaddr_parse("[::1]", &a) != 0);
    CHECK(ipaddr_parse("::1", &a) == 0 && a.family == AF_INET6);
    CHECK(ipaddr_parse("::ffff:1.2.3.4", &a) == 0 && a.family == AF_INET && a.b[0] == 1);
    ipaddr_format(&a, buf, sizeof(buf));
    CHECK(strcmp(buf, "1.2.3.4") == 0);
    CHECK(cidr("::ffff:0:0/96", &net, &bits) == 0 && net.family == AF_INET && bits == 0);
    CHECK(cidr("::/0", &net, &bits) == 0 && net.family == AF_INET6 && bits == 0);
    CHECK(cidr("10.0.0.0/8x", &net, &bits) != 0);
    CHECK(cidr("/8", &net, &bits) != 0);
    CHECK(cidr("::ffff:127.0.0.1", &net, &bits) == 0 && net.family == AF_INET && bits == 32);
}

static void test_hostname(void)
{
    char n[HOSTNAME_MAX + 1];
    char long_label[80], long_name[300];

    CHECK(hostname_normalize("Api.Example.COM.", n) == 0 && strcmp(n, "api.example.com") == 0);
    CHECK(hostname_normalize("localhost", n) == 0);
    CHECK(hostname_normalize("_dmarc.example.com", n) == 0);
    CHECK(hostname_normalize("xn--bcher-kva.example", n) == 0);
    CHECK(hostname_normalize("", n) != 0 && hostname_normalize(".", n) != 0);
    CHECK(hostname_normalize("a..b", n) != 0 && hostname_normalize(".a", n) != 0);
    CHECK(hostname_normalize("a.b..", n) != 0);
    /* Names getaddrinfo would read as IPv4 numbers are never resolved. */
    CHECK(!hostname_resolvable("2130706433") && !hostname_resolvable("0x7f000001"));
    CHECK(!hostname_resolvable("127.1") && !hostname_resolvable("0x7f.1"));
    CHECK(!hostname_resolvable("a.b.017"));
    CHECK(hostname_resolvable("localhost") && hostname_resolvable("1.example.com"));
    CHECK(hostname_resolvable("xn--p1ai"));
    CHECK(hostname_normalize("a b", n) != 0 && hostname_normalize("a%2e.com", n) != 0);
    memset(long_label, 'a', 64);
    long_label[64] = '\0';
    CHECK(hostname_normalize(long_label, n) != 0);
    long_label[63] = '\0';
    CHECK(hostname_normalize(long_label, n) == 0);
    memset(long_name, 'a', sizeof(long_name));
    for (size_t i = 50; i < 254; i += 50)
        long_name[i] = '.';
    long_name[254] = '\0';
    CHECK(hostname_normalize(long_name, n) != 0);
    long_name[253] = '\0';
    CHECK(hostname_normalize(long_name, n) == 0);
}

/* Parses a whole head; the request or NULL. */
static struct http_req req;
static const char *why;
static const struct http_req *head(const char *s)
{
    return http_head_parse(s, strlen(s), &req, &why) == 0 ? &req : NULL;
}

static void test_head_scan(void)
{
    size_t n = 0;
    static const char full[] = "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test\r\n\r\nleftover";

    CHECK(http_head_scan(full, sizeof(full) - 1, &n) == HEAD_COMPLETE &&
          n == sizeof(full) - 1 - strlen("leftover"));
    CHECK(http_head_scan(full, 20, &n) == HEAD_PARTIAL);
    CHECK(http_head_scan("", 0, &n) == HEAD_PARTIAL);
    CHECK(http_head_scan("GET / HTTP/1.1\n\n", 16, &n) == HEAD_BAD); /* bare LF */
    CHECK(http_head_scan("GET /\rx", 7, &n) == HEAD_BAD);
    CHECK(http_head_scan("GET /\r", 6, &n) == HEAD_PARTIAL);
    CHECK(http_head_scan("\x16\x03\x01\x00", 4, &n) == HEAD_BAD); /* a TLS hello */
    CHECK(http_head_scan("GET /\x7f", 6, &n) == HEAD_BAD);
    CHECK(http_head_scan("\r\n\r\n", 4, &n) == HEAD_COMPLETE && !head("\r\n\r\n"));
}

static void test_head_connect(void)
{
    const struct http_req *r;

    r = head("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n");
    CHECK(r && r->kind == HTTP_CONNECT && strcmp(r->host, "api.example.com") == 0 &&
          r->port == 443 && !r->bracketed && strcmp(r->method, "CONNECT") == 0);
    r = head("CONNECT 198.51.100.10:8443 HTTP/1.0\r\n\r\n");
    CHECK(r && strcmp(r->host, "198.51.100.10") == 0 && r->port == 8443 &&
          strcmp(r->version, "HTTP/1.0") == 0);
    r = head("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n");
    CHECK(r && r->bracketed && strcmp(r->host, "2001:db8::1") == 0 && r->port == 443);
    CHECK(!head("CONNECT api.example.com HTTP/1.1\r\n\r\n")); /* no port */
    CHECK(!head("CONNECT api.example.com: HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT api.example.com:0 HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT api.example.com:65536 HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT api.example.com:443x HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT api.example.com:0000443 HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n")); /* v6 needs [] */
    CHECK(!head("CONNECT [2001:db8::1]443 HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT [198.51.100.1]:443 HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT user@api.example.com:443 HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT http://api.example.com:443 HTTP/1.1\r\n\r\n"));
    CHECK(!head("CONNECT api.example.com:443 HTTP/2.0\r\n\r\n"));
    CHECK(!head("CONNECT  api.example.com:443 HTTP/1.1\r\n\r\n"));
    CHECK(!head("connect api.example.com:443 HTTP/1.1\r\n\r\n"));
}

static void test_head_absolute(void)
{
    const struct http_req *r;

    r = head("GET http://api.example.com/v1/x?q=1 HTTP/1.1\r\nAccept: */*\r\n\r\n");
    CHECK(r && r->kind == HTTP_ABSOLUTE && strcmp(r->host, "api.example.com") == 0 &&
          r->port == 80 && r->path_len == strlen("/v1/x?q=1"));
    r = head("POST HTTP://198.51.100.10:8000/upload HTTP/1.0\r\nContent-Length: 3\r\n\r\n");
    CHECK(r && strcmp(r->method, "POST") == 0 && r->port == 8000 &&
          strcmp(r->host, "198.51.100.10") == 0);
    r = head("GET http://[2001:db8::1]:8080/ HTTP/1.1\r\n\r\n");
    CHECK(r && r->bracketed && r->port == 8080 && strcmp(r->host, "2001:db8::1") == 0);
    r = head("GET http://api.example.com HTTP/1.1\r\n\r\n");
    CHECK(r && r->path_len == 0 && r->port == 80);
    CHECK(!head("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n") &&
          strstr(why, "absolute-form") != NULL);
    CHECK(!head("GET https://api.example.com/ HTTP/1.1\r\n\r\n") && strstr(why, "CONNECT"));
    CHECK(!head("GET ftp://api.example.com/ HTTP/1.1\r\n\r\n"));
    CHECK(!head("GET http://user:pw@api.example.com/ HTTP/1.1\r\n\r\n"));
    CHECK(!head("GET http:///x HTTP/1.1\r\n\r\n"));
    CHECK(!head("GET http://api.example.com:/ HTTP/1.1\r\n\r\n"));
    CHECK(!head("GET http://a%2eb.com/ HTTP/1.1\r\n\r\n"));
    CHECK(!head("GET http://api.example.com/ HTTP/1.1\r\nBad Header: x\r\n\r\n"));
    CHECK(!head("GET http://api.example.com/ HTTP/1.1\r\nX-A : x\r\n\r\n"));
    CHECK(!head("GET http://api.example.com/ HTTP/1.1\r\nNoColon\r\n\r\n"));
    CHECK(!head("GET http://api.example.com/ HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n"));
    CHECK(!head("GET http://api.example.com/ HTTP/1.1\r\n:empty\r\n\r\n"));
    CHECK(!head("GET http://api.example.com/ HTTP/1.1\r\n\r")); /* not a whole head */
    CHECK(!head("GET http://api.example.com/a b HTTP/1.1\r\n\r\n"));
    CHECK(!head("GET http://api.example.com/ HTTP/1.1 \r\n\r\n"));
    CHECK(!head("G3T http://api.example.com/ HTTP/1.1\r\n\r\n"));
    CHECK(!head("VERYLONGMETHODNAMEXXXX http://a.com/ HTTP/1.1\r\n\r\n"));
    CHECK(!head("GET\r\n\r\n") && !head("GET http://a.com/\r\n\r\n"));
    CHECK(http_head_parse("GET http://a.com/ HTTP/1.1\r\n\r\n", 10, &req, &why) != 0);
}

static void test_head_oversized(void)
{
    size_t size = HTTP_HEAD_MAX + 100, n;
    char *big = malloc(size);
    int off = snprintf(big, size, "GET http://a.example.com/ HTTP/1.1\r\nX-Big: ");

    memset(big + off, 'a', size - (size_t)off);
    CHECK(http_head_scan(big, HTTP_HEAD_MAX, &n) == HEAD_PARTIAL); /* reader answers 431 */
    memcpy(big + HTTP_HEAD_MAX - 4, "\r\n\r\n", 4);
    CHECK(http_head_scan(big, HTTP_HEAD_MAX, &n) == HEAD_COMPLETE && n == HTTP_HEAD_MAX);
    CHECK(http_head_parse(big, n, &req, &why) == 0);
    free(big);
    char host[400];
    memset(host, 'a', sizeof(host));
    snprintf(host + 300, 100, ".com:443 HTTP/1.1\r\n\r\n");
    char line[512];
    snprintf(line, sizeof(line), "CONNECT %s", host);
    CHECK(!head(line)); /* a host over 253 bytes */
}

static void test_head_rewrite(void)
{
    static const char in[] = "GET http://API.example.com:8080/p?q=1 HTTP/1.1\r\n"
                             "Host: other.test\r\nProxy-Connection: keep-alive\r\n"
                             "Proxy-Authorization: Basic c2VjcmV0\r\nConnection: keep-alive\r\n"
                             "Keep-Alive: 300\r\nAccept: */*\r\nX-Connection-Id: 7\r\n\r\n";
    static const char want[] = "GET /p?q=1 HTTP/1.1\r\nHost: API.example.com:8080\r\n"
                               "Accept: */*\r\nX-Connection-Id: 7\r\nConnection: close\r\n\r\n";
    char out[1024];
    const struct http_req *r = head(in);
    long n = r ? http_head_rewrite(in, sizeof(in) - 1, r, out, sizeof(out)) : -1;

    CHECK(n == (long)sizeof(want) - 1 && memcmp(out, want, sizeof(want) - 1) == 0);
    CHECK(r && http_head_rewrite(in, sizeof(in) - 1, r, out, 20) == -1);

    static const char in2[] = "HEAD http://[2001:db8::1]?x HTTP/1.0\r\n\r\n";
    static const char want2[] =
        "HEAD /?x HTTP/1.0\r\nHost: [2001:db8::1]\r\nConnection: close\r\n\r\n";
    r = head(in2);
    n = r ? http_head_rewrite(in2, sizeof(in2) - 1, r, out, sizeof(out)) : -1;
    CHECK(n == (long)sizeof(want2) - 1 && memcmp(out, want2, sizeof(want2) - 1) == 0);
}

/* A head with one extra header line h (or none), parsed. */
static const struct http_req *head_with(const char *h)
{
    static char buf[512];
    snprintf(buf, sizeof(buf), "POST http://a.test/ HTTP/1.1\r\n%s\r\n", h);
    return head(buf);
}

static void test_head_framing(void)
{
    const struct http_req *r = head_with("");
    CHECK(r && r->framing == FRAMING_NONE);
    r = head_with("Content-Length: 42\r\n");
    CHECK(r && r->framing == FRAMING_LENGTH && r->content_length == 42);
    r = head_with("content-length:\t0 \r\n");
    CHECK(r && r->framing == FRAMING_LENGTH && r->content_length == 0);
    r = head_with("Transfer-Encoding: chunked\r\n");
    CHECK(r && r->framing == FRAMING_CHUNKED);
    r = head_with("TRANSFER-ENCODING:  Chunked\r\nX-Content-Length: 5\r\n");
    CHECK(r && r->framing == FRAMING_CHUNKED);
    r = head_with("Content-Length: 999999999999999999\r\n");
    CHECK(r && r->content_length == 999999999999999999ULL);
    /* How one request hides in another's body: whatever two parsers could
     * read differently is a 400 (conn.c answers every parse failure so). */
    CHECK(!head_with("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n") &&
          strstr(why, "ambiguous framing"));
    CHECK(!head_with("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n"));
    CHECK(!head_with("Content-Length: 3\r\nContent-Length: 3\r\n"));
    CHECK(!head_with("Content-Length: 3\r\nContent-Length: 4\r\n"));
    CHECK(!head_with("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"));
    CHECK(!head_with("Content-Length: 3, 3\r\n"));
    static const char *const bad_lengths[] = {
        "", "+3", "-1", "0x3", "3 3", "1e3", "1234567890123456789"};
    for (size_t i = 0; i < sizeof(bad_lengths) / sizeof(bad_lengths[0]); i++) {
        char h[64];
        snprintf(h, sizeof(h), "Content-Length: %s\r\n", bad_lengths[i]);
        CHECK(!head_with(h));
    }
    CHECK(!head_with("Transfer-Encoding: gzip, chunked\r\n"));
    CHECK(!head_with("Transfer-Encoding: chunked, identity\r\n"));
    CHECK(!head_with("Transfer-Encoding: xchunked\r\n"));
    CHECK(!head("POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"));
    CHECK(head("POST http://a.test/ HTTP/1.0\r\nContent-Length: 1\r\n\r\n"));
}

/* The body of the head with header line h, fed s whole: bytes taken. */
static long body_feed(const char *h, const char *s, struct http_body *b)
{
    const struct http_req *r = head_with(h);
    if (!r)
        return -2;
    http_body_start(b, r);
    return http_body_feed(b, s, strlen(s));
}

static void test_body(void)
{
    static const char chunked[] = "Transfer-Encoding: chunked\r\n";
    static const char next[] = "GET http://evil.test/ HTTP/1.1\r\n\r\n";
    struct http_body b;
    char in[256];

    CHECK(body_feed("", next, &b) == 0 && http_body_done(&b));
    CHECK(body_feed("Content-Length: 0\r\n", next, &b) == 0 && http_body_done(&b));
    snprintf(in, sizeof(in), "abc%s", next);
    CHECK(body_feed("Content-Length: 3\r\n", in, &b) == 3 && http_body_done(&b));
    CHECK(body_feed("Content-Length: 10\r\n", "abc", &b) == 3 && !http_body_done(&b) &&
          http_body_room(&b) == 7);
    http_body_skip(&b, 7);
    CHECK(http_body_done(&b));

    /* Chunked: sizes in hex, extensions, trailers; it ends exactly at the
     * final CRLF, so the next request is never taken with it. */
    static const char body[] = "a;name=\"v\"\r\n0123456789\r\n1F\r\n"
                               "0123456789012345678901234567890\r\n0\r\nX-T: 1\r\n\r\n";
    snprintf(in, sizeof(in), "%s%s", body, next);
    CHECK(body_feed(chunked, in, &b) == (long)sizeof(body) - 1 && http_body_done(&b));
    /* Fed a byte at a time, or a chunk's data skipped unseen: the same end. */
    const struct http_req *r = head_with(chunked);
    long taken = 0;
    http_body_start(&b, r);
    for (size_t i = 0; in[i] && !http_body_done(&b); i++) {
        uint64_t room = http_body_room(&b);
        if (room) {
            http_body_skip(&b, 1);
            taken++;
        } else {
            taken += http_body_feed(&b, in + i, 1);
        }
    }
    CHECK(taken == (long)sizeof(body) - 1);
    CHECK(body_feed(chunked, "0\r\n\r\n", &b) == 5 && http_body_done(&b));
    CHECK(body_feed(chunked, "3\r\nab", &b) == 5 && http_body_room(&b) == 1);

    static const char *const bad[] = {
        "3\nabc\r\n0\r\n\r\n",        /* bare LF */
        "3 \r\nabc\r\n0\r\n\r\n",     /* whitespace after the size */
        "\r\n",                       /* no size */
        "g\r\n",                      /* not hex */
        "-1\r\n",                     /* not hex */
        "1000000000000000\r\n",       /* 16 digits */
        "3\r\nabcd\r\n",              /* data longer than its size */
        "3\r\nabc\n0\r\n\r\n",        /* bare LF after data */
        "0\r\nX: 1\n\r\n",            /* bare LF in a trailer */
        "0\r\n\n",                    /* bare LF at the end */
        "1;a\x01b\r\nx\r\n0\r\n\r\n", /* control byte in an extension */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK(body_feed(chunked, bad[i], &b) == -1);
}

static int conf_ok(const char *const *args, struct egress_conf *c)
{
    char *argv[16];
    char err[256] = "";
    int argc = 0;

    argv[argc++] = "corral-egress";
    for (; *args; args++)
        argv[argc++] = (char *)*args;
    int rc = egress_conf_parse(argc, argv, c, err, sizeof(err));
    if (rc != 0)
        CHECK(err[0] != '\0');
    return rc == 0;
}

static void test_conf(void)
{
    struct egress_conf c;

    CHECK(conf_ok((const char *[]){"-sandbox", "sb1", "-policy", "{}", NULL}, &c) &&
          c.listen_port == 3128 && c.listen_addr.family == AF_INET &&
          strcmp(c.settings.sandbox, "sb1") == 0);
    egress_conf_free(&c);
    CHECK(conf_ok((const char *[]){"-listen", "[::1]:8080", "-sandbox", "s", "-policy", "{}", NULL},
                  &c) &&
          c.listen_port == 8080 && c.listen_addr.family == AF_INET6);
    egress_conf_free(&c);
    CHECK(conf_ok((const char *[]){"--listen", "127.0.0.1:1", "--sandbox", "s", "--policy",
                                   "{\"deny\":[\"0.0.0.0/0\"]}", NULL},
                  &c) &&
          c.settings.policy.deny_all);
    egress_conf_free(&c);
    CHECK(!conf_ok((const char *[]){"-policy", "{}", NULL}, &c));
    CHECK(!conf_ok((const char *[]){"-sandbox", "s", NULL}, &c));
    CHECK(!conf_ok((const char *[]){"-sandbox", "s", "-policy", "{\"allow\":[1]}", NULL}, &c));
    CHECK(!conf_ok((const char *[]){"-sandbox", "a b", "-policy", "{}", NULL}, &c));
    /* A pre-started proxy: its sandbox and policy come later, from the file. */
    char err[256];
    CHECK(conf_ok((const char *[]){"-config-file", "/run/corral-egress/config", NULL}, &c) &&
          c.settings.sandbox[0] == '\0' && strcmp(c.config_file, "/run/corral-egress/config") == 0);
    CHECK(egress_conf_take_file(&c, "sb9\n{\"deny\":[\"0.0.0.0/0\"]}\n", err, sizeof(err)) == 0 &&
          strcmp(c.settings.sandbox, "sb9") == 0 && c.settings.policy.deny_all);
    egress_conf_free(&c);
    CHECK(!conf_ok((const char *[]){"-config-file", "relative/path", NULL}, &c));
    CHECK(!conf_ok((const char *[]){"-config-file", "/x", "-sandbox", "s", NULL}, &c));
    CHECK(!conf_ok((const char *[]){"-config-file", "/x", "-policy", "{}", NULL}, &c));
    CHECK(conf_ok((const char *[]){"-config-file", "/x", NULL}, &c));
    CHECK(egress_conf_take_file(&c, "no newline", err, sizeof(err)) != 0 && err[0]);
    CHECK(egress_conf_take_file(&c, "a b\n{}\n", err, sizeof(err)) != 0);
    CHECK(egress_conf_take_file(&c, "\n{}\n", err, sizeof(err)) != 0);
    CHECK(egress_conf_take_file(&c, "s\n{\"allow\":[1]}\n", err, sizeof(err)) != 0);
    egress_conf_free(&c);
    CHECK(!conf_ok((const char *[]){"-sandbox", "s\nx", "-policy", "{}", NULL}, &c));
    CHECK(!conf_ok((const char *[]){"-sandbox", "s", "-policy", "{}", "-listen", NULL}, &c));
    CHECK(!conf_ok((const char *[]){"-sandbox", "s", "-policy", "{}", "-port", "1", NULL}, &c));
    CHECK(!conf_ok((const char *[]){"-sandbox", "s", "-policy", "{}", "extra", "x", NULL}, &c));
    static const char *const bad_listen[] = {
        "127.0.0.1",      "127.0.0.1:0",  "127.0.0.1:65536", "::1:80",
        "[127.0.0.1]:80", "localhost:80", "127.0.0.1:8x",    ":80"};
    for (size_t i = 0; i < sizeof(bad_listen) / sizeof(bad_listen[0]); i++)
        CHECK(!conf_ok(
            (const char *[]){"-listen", bad_listen[i], "-sandbox", "s", "-policy", "{}", NULL},
            &c));
}

/* The test hook can never be on in a proxy a sandbox reaches. */
static void test_conf_test_host(void)
{
    struct egress_conf c;
    const char *pol_json = "{\"allow\": [\"a.test\"], \"deny\": [\"0.0.0.0/0\"]}";

    CHECK(conf_ok((const char *[]){"-listen", "127.0.0.1:3128", "-sandbox", "s", "-policy",
                                   pol_json, "-test-host", "A.Test=127.0.0.2", "-test-host",
                                   "b.test=::1", NULL},
                  &c) &&
          c.n_test_hosts == 2);
    const struct ipaddr *a = egress_conf_test_host(&c, "a.test");
    CHECK(a && a->family == AF_INET && a->b[3] == 2);
    CHECK(!egress_conf_test_host(&c, "c.test"));
    /* Judged by the policy, not refused as loopback. */
    struct ipaddr ok[1];
    size_t n_ok;
    CHECK(decide_stand_in(&c.settings.policy, decide_name_early(&c.settings.policy, "a.test"), a,
                          ok, &n_ok) == V_ALLOW &&
          n_ok == 1);
    CHECK(decide_stand_in(&c.settings.policy, decide_name_early(&c.settings.policy, "b.test"),
                          egress_conf_test_host(&c, "b.test"), ok, &n_ok) == V_DENY_NAME &&
          n_ok == 0);
    egress_conf_free(&c);
    struct policy open = pol("{}");
    struct ipaddr lo = ip("127.0.0.3");
    CHECK(decide_stand_in(&open, V_RESOLVE, &lo, ok, &n_ok) == V_ALLOW);
    policy_free(&open);

    /* workerd's proxies listen on 0.0.0.0 (or wait for a config file). */
    CHECK(!conf_ok(
        (const char *[]){"-sandbox", "s", "-policy", "{}", "-test-host", "a.test=127.0.0.2", NULL},
        &c));
    CHECK(!conf_ok((const char *[]){"-listen", "0.0.0.0:3128", "-sandbox", "s", "-policy", "{}",
                                    "-test-host", "a.test=127.0.0.2", NULL},
                   &c));
    /* A loopback -listen is what keeps it off a sandbox: workerd's proxies,
     * with or without a config file, listen on 0.0.0.0. */
    CHECK(conf_ok((const char *[]){"-listen", "127.0.0.1:3128", "-config-file", "/x", "-test-host",
                                   "a.test=127.0.0.2", NULL},
                  &c));
    CHECK(!conf_ok((const char *[]){"-listen", "0.0.0.0:3128", "-config-file", "/x", "-test-host",
                                    "a.test=127.0.0.2", NULL},
                   &c));
    /* Stand-ins are loopback: the hook never opens another private address. */
    static const char *const bad[] = {"a.test=10.0.0.1", "a.test=192.0.2.1", "a.test",
                                      "=127.0.0.2",      "a b=127.0.0.2",    "a.test=localhost",
                                      "a.test=::2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK(!conf_ok((const char *[]){"-listen", "127.0.0.1:3128", "-sandbox", "s", "-policy",
                                        "{}", "-test-host", bad[i], NULL},
                       &c));
}

int main(void)
{
    test_policy_parse();
    test_policy_match();
    test_decide_literal();
    test_decide_name();
    test_blocked_v4();
    test_blocked_v6();
    test_ipaddr();
    test_hostname();
    test_head_scan();
    test_head_connect();
    test_head_absolute();
    test_head_oversized();
    test_head_rewrite();
    test_head_framing();
    test_body();
    test_conf();
    test_conf_test_host();
    test_rules_all();
    test_audit_all();
    return CHECK_SUMMARY();
}
