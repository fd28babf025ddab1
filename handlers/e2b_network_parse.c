#include "e2b_network_parse.h"

#include "egress_rule.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SECRET_PREFIX "e2b.secrets."
#define TOKEN_PREFIX "e2b.identity.tokens."
#define NAME_MAX_LEN 128

static int fail(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
    snprintf(err, errlen, fmt, a, b);
    return -1;
}

static int absent(const json_t *v)
{
    return !v || json_is_null(v);
}

/* A placeholder's name: [A-Za-z0-9._-], 1 to NAME_MAX_LEN. */
static int good_name(const char *s, size_t n)
{
    if (n == 0 || n > NAME_MAX_LEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
            return 0;
    return 1;
}

int e2b_has_placeholder(const char *text)
{
    return strstr(text, "${e2b.") != NULL;
}

/* Every "${e2b.…}" in value is a secret or a token of tokens. */
static int check_placeholders(const char *value, const json_t *tokens, const char *where, char *err,
                              size_t errlen)
{
    char name[NAME_MAX_LEN + 1];

    for (const char *p = strstr(value, "${e2b."); p; p = strstr(p + 2, "${e2b.")) {
        const char *in = p + 2, *end = strchr(in, '}');
        size_t n = end ? (size_t)(end - in) : 0;
        size_t sp = strlen(SECRET_PREFIX), tp = strlen(TOKEN_PREFIX);

        if (end && n > sp && strncmp(in, SECRET_PREFIX, sp) == 0 && good_name(in + sp, n - sp))
            continue;
        if (!end || n <= tp || strncmp(in, TOKEN_PREFIX, tp) != 0 || !good_name(in + tp, n - tp))
            return fail(err, errlen,
                        "%s: a placeholder must be ${e2b.secrets.NAME} or "
                        "${e2b.identity.tokens.NAME}, NAME of [A-Za-z0-9._-]%s",
                        where, "");
        snprintf(name, sizeof(name), "%.*s", (int)(n - tp), in + tp);
        if (!json_object_get(tokens, name))
            return fail(err, errlen, "%s: identity token %s is not defined in iam.tokens", where,
                        name);
    }
    return 0;
}

/* An HTTP header name: a token (RFC 9110), at most 128 bytes, and not one
 * that frames or routes the request (the proxy would refuse it: where a
 * request ends, or where it goes, is never a rule's to change). */
static int good_header_name(const char *s)
{
    static const char *const framing[] = {"content-length",
                                          "transfer-encoding",
                                          "host",
                                          "connection",
                                          "keep-alive",
                                          "te",
                                          "trailer",
                                          "upgrade",
                                          "proxy-connection",
                                          "proxy-authorization",
                                          NULL};
    size_t n = strlen(s);

    if (n == 0 || n > 128)
        return 0;
    for (int i = 0; framing[i]; i++)
        if (strcasecmp(s, framing[i]) == 0)
            return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("!#$%&'*+-.^_`|~", s[i]))
            return 0;
    return 1;
}

static int good_header_value(const char *s)
{
    size_t n = strlen(s);

    if (n > E2B_HEADER_VALUE_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\r' || s[i] == '\n' || ((unsigned char)s[i] < 0x20 && s[i] != '\t'))
            return 0;
    return 1;
}

/* One rule {"transform": {"headers": {...}}} as {"headers": {...}}. */
static json_t *one_rule(const json_t *rule, const json_t *tokens, const char *where, char *err,
                        size_t errlen)
{
    const json_t *t = json_object_get(rule, "transform"), *h, *v;
    json_t *headers = json_object();
    const char *k;

    if (!json_is_object(rule) || (!absent(t) && !json_is_object(t)) ||
        (!absent(h = json_object_get(t, "headers")) && !json_is_object(h))) {
        fail(err, errlen, "%s: want {\"transform\": {\"headers\": {name: value}}}%s", where, "");
        json_decref(headers);
        return NULL;
    }
    if (json_object_size(h) > E2B_HEADERS_MAX) {
        fail(err, errlen, "%s: at most 32 headers for one host%s", where, "");
        json_decref(headers);
        return NULL;
    }
    json_object_foreach((json_t *)h, k, v)
    {
        if (!good_header_name(k) || !json_is_string(v) ||
            !good_header_value(json_string_value(v))) {
            fail(err, errlen,
                 "%s: header %.64s: want a token name (not one that frames or routes the request) "
                 "and a string value of at most 4096 bytes without CR, LF or control characters",
                 where, k);
            json_decref(headers);
            return NULL;
        }
        if (check_placeholders(json_string_value(v), tokens, where, err, errlen) != 0) {
            json_decref(headers);
            return NULL;
        }
        json_object_set_new(headers, k, json_string(json_string_value(v)));
    }
    return json_pack("{s:o}", "headers", headers);
}

/* A rules key: an exact lower-cased name or "*." and one; bare "*" is not. */
static int good_rule_host(const char *host, char *lower, size_t len)
{
    size_t n = strlen(host);
    struct egress_rule r;

    if (n == 0 || n >= len)
        return 0;
    for (size_t i = 0; i <= n; i++)
        lower[i] = (char)tolower((unsigned char)host[i]);
    return egress_rule_parse(lower, &r) == 0 &&
           (r.kind == EGRESS_RULE_NAME || r.kind == EGRESS_RULE_WILDCARD);
}

int e2b_rules_parse(const json_t *rules, const json_t *tokens, const char *field, json_t **out,
                    char *err, size_t errlen)
{
    char host[256], where[320];
    const char *k;
    json_t *v, *res;

    *out = NULL;
    if (absent(rules) || (json_is_object(rules) && json_object_size(rules) == 0))
        return 0;
    if (!json_is_object(rules) || json_object_size(rules) > E2B_RULE_HOSTS_MAX)
        return fail(err, errlen, "%s: want an object of at most 64 hosts%s", field, "");
    res = json_object();
    json_object_foreach((json_t *)rules, k, v)
    {
        json_t *list = json_array(), *r;
        size_t i;

        snprintf(where, sizeof(where), "%s[%.200s]", field, k);
        if (!good_rule_host(k, host, sizeof(host)) || !json_is_array(v) ||
            json_array_size(v) > E2B_RULES_PER_HOST) {
            json_decref(list);
            json_decref(res);
            return fail(err, errlen,
                        "%s: want a host name or *.name (not bare *) and a list of at most 8 "
                        "rules%s",
                        where, "");
        }
        size_t headers = 0;
        json_array_foreach(v, i, r)
        {
            json_t *one = one_rule(r, tokens, where, err, errlen);
            if (one &&
                (headers += json_object_size(json_object_get(one, "headers"))) > E2B_HEADERS_MAX) {
                json_decref(one);
                one = NULL;
                fail(err, errlen, "%s: at most 32 headers for one host%s", where, "");
            }
            if (!one) {
                json_decref(list);
                json_decref(res);
                return -1;
            }
            json_array_append_new(list, one);
        }
        json_object_set_new(res, host, list);
    }
    *out = res;
    return 0;
}

/* "host:port" or "[v6]:port", port 1-65535, host a name or an address that
 * is not private. */
static int good_address(const char *a)
{
    const char *colon = strrchr(a, ':');
    char host[256], *end;
    long port;
    struct egress_rule r;

    if (!colon || colon == a || (size_t)(colon - a) >= sizeof(host))
        return 0;
    port = strtol(colon + 1, &end, 10);
    if (*end || colon[1] == '\0' || port < 1 || port > 65535)
        return 0;
    snprintf(host, sizeof(host), "%.*s", (int)(colon - a), a);
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    if (egress_rule_parse(host, &r) != 0 || r.kind == EGRESS_RULE_WILDCARD)
        return 0;
    return r.kind == EGRESS_RULE_NAME ||
           (r.prefix == (r.family == AF_INET ? 32 : 128) && !egress_rule_is_private(&r));
}

int e2b_upstream_parse(const json_t *proxy, const char *field, json_t **out, char *err,
                       size_t errlen)
{
    const json_t *a = json_object_get(proxy, "address"), *u = json_object_get(proxy, "username"),
                 *p = json_object_get(proxy, "password");

    *out = NULL;
    if (absent(proxy))
        return 0;
    if (!json_is_object(proxy) || !json_is_string(a) || !good_address(json_string_value(a)))
        return fail(err, errlen,
                    "%s.address: want host:port of a SOCKS5 proxy (a name or a public "
                    "address)%s",
                    field, "");
    if ((!absent(u) &&
         (!json_is_string(u) || json_string_length(u) > 255 || json_string_length(u) == 0)) ||
        (!absent(p) && (!json_is_string(p) || json_string_length(p) > 255)))
        return fail(err, errlen, "%s: username and password are strings of 1 to 255 bytes%s", field,
                    "");
    if (absent(p) != absent(u)) /* RFC 1929 sends both: an empty password is none */
        return fail(err, errlen, "%s: a username and a password go together%s", field, "");
    *out = json_pack("{s:O}", "address", a);
    if (!absent(u))
        json_object_set_new(*out, "username", json_string(json_string_value(u)));
    if (!absent(p))
        json_object_set_new(*out, "password", json_string(json_string_value(p)));
    return 0;
}

int e2b_iam_parse(const json_t *iam, json_t **out, char *err, size_t errlen)
{
    const json_t *tokens = json_object_get(iam, "tokens");
    const char *k;
    json_t *v, *res;

    *out = NULL;
    if (absent(iam) || (json_is_object(iam) && absent(tokens)))
        return 0;
    if (!json_is_object(iam) || !json_is_object(tokens) ||
        json_object_size(tokens) > E2B_IAM_TOKENS_MAX)
        return fail(err, errlen, "iam.tokens: want an object of at most 16 tokens%s%s", "", "");
    if (json_object_size(tokens) == 0)
        return 0;
    res = json_object();
    json_object_foreach((json_t *)tokens, k, v)
    {
        const json_t *aud = json_object_get(v, "audience"), *type = json_object_get(v, "tokenType");
        if (!good_name(k, strlen(k)) || !json_is_string(aud) || json_string_length(aud) == 0 ||
            json_string_length(aud) > 256 || !json_is_string(type) ||
            strcmp(json_string_value(type), "JWT-SVID") != 0) {
            json_decref(res);
            return fail(err, errlen,
                        "iam.tokens.%.128s: want a name of [A-Za-z0-9._-], an audience of 1 to "
                        "256 bytes and tokenType \"JWT-SVID\" (the only type Corral mints)%s",
                        k, "");
        }
        json_object_set_new(res, k,
                            json_pack("{s:O, s:s}", "audience", aud, "tokenType", "JWT-SVID"));
    }
    *out = json_pack("{s:o}", "tokens", res);
    return 0;
}
