#include "egress_rule.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int valid_domain(const char *s)
{
    size_t n, label = 0;

    if (strncmp(s, "*.", 2) == 0)
        s += 2;
    n = strlen(s);
    if (n == 0 || n > 253 || s[0] == '.' || s[n - 1] == '.' || s[0] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '.') {
            if (label == 0)
                return 0;
            label = 0;
        } else if (isalnum(c) || c == '-') {
            if (++label > 63)
                return 0;
        } else {
            return 0;
        }
    }
    return 1;
}

/* A name whose last label is all digits is a malformed address, not a name. */
static int numeric_tld(const char *s)
{
    const char *dot = strrchr(s, '.');

    s = dot ? dot + 1 : s;
    return strspn(s, "0123456789") == strlen(s);
}

static int parse_prefix(const char *text, int max)
{
    char *end;
    long n;

    if (!isdigit((unsigned char)text[0]) || (text[0] == '0' && text[1]))
        return -1;
    n = strtol(text, &end, 10);
    return *end || n > max ? -1 : (int)n;
}

static int parse_cidr(const char *text, struct egress_rule *r)
{
    char host[64];
    const char *slash = strchr(text, '/');
    size_t n = slash ? (size_t)(slash - text) : strlen(text);

    if (n == 0 || n >= sizeof(host))
        return -1;
    memcpy(host, text, n);
    host[n] = '\0';
    memset(r->addr, 0, sizeof(r->addr));
    if (inet_pton(AF_INET, host, r->addr) == 1)
        r->family = AF_INET;
    else if (inet_pton(AF_INET6, host, r->addr) == 1)
        r->family = AF_INET6;
    else
        return -1;
    r->prefix = r->family == AF_INET ? 32 : 128;
    if (slash && (r->prefix = parse_prefix(slash + 1, r->prefix)) < 0)
        return -1;
    r->kind = EGRESS_RULE_CIDR;
    return 0;
}

int egress_rule_parse(const char *text, struct egress_rule *r)
{
    memset(r, 0, sizeof(*r));
    if (strchr(text, ':') || strchr(text, '/') || numeric_tld(text))
        return parse_cidr(text, r);
    if (!valid_domain(text))
        return -1;
    r->kind = strncmp(text, "*.", 2) == 0 ? EGRESS_RULE_WILDCARD : EGRESS_RULE_NAME;
    return 0;
}

static int prefix_match(const unsigned char *a, const unsigned char *b, int bits)
{
    int bytes = bits / 8, rest = bits % 8;

    if (memcmp(a, b, (size_t)bytes) != 0)
        return 0;
    return rest == 0 || ((a[bytes] ^ b[bytes]) & (0xff << (8 - rest))) == 0;
}

int egress_rule_contains(const struct egress_rule *r, int family, const unsigned char *addr)
{
    return r->kind == EGRESS_RULE_CIDR && r->family == family &&
           prefix_match(r->addr, addr, r->prefix);
}

/* The ranges a worker refuses whatever a policy says (ARCHITECTURE.md). */
static const char *const private_ranges[] = {"10.0.0.0/8",     "100.64.0.0/10", "127.0.0.0/8",
                                             "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16",
                                             "0.0.0.0/32",     "::1/128",       "::/128",
                                             "fc00::/7",       "fe80::/10",     NULL};

int egress_rule_is_private(const struct egress_rule *r)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    struct egress_rule v4, range;

    if (r->kind != EGRESS_RULE_CIDR)
        return 0;
    /* ::ffff:10.0.0.1 is 10.0.0.1. */
    if (r->family == AF_INET6 && r->prefix >= 96 && memcmp(r->addr, mapped, 12) == 0) {
        v4 = (struct egress_rule){EGRESS_RULE_CIDR, AF_INET, {0}, r->prefix - 96};
        memcpy(v4.addr, r->addr + 12, 4);
        r = &v4;
    }
    for (int i = 0; private_ranges[i]; i++)
        if (egress_rule_parse(private_ranges[i], &range) == 0 && range.prefix <= r->prefix &&
            egress_rule_contains(&range, r->family, r->addr))
            return 1;
    return 0;
}
