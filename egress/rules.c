/* rules.c: strict like policy.c: an unknown key, a bad name or a value that
 * could split a request head refuses the whole configuration, so a typo never
 * sends a request without the header its owner expects. */
#include "rules.h"

#include "conf_text.h"
#include "placeholder.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool token_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > RULE_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("!#$%&'*+-.^_`|~", s[i]))
            return false;
    return true;
}

/* Headers that carry the request's framing or routing, or that belong to the
 * hop: setting one would make the proxy and the server disagree on where a
 * request ends (smuggling) or on where it goes. */
static bool name_reserved(const char *s)
{
    static const char *const reserved[] = {
        "content-length", "transfer-encoding", "connection", "keep-alive",         "te", "trailer",
        "upgrade",        "proxy-connection",  "host",       "proxy-authorization"};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (strcasecmp(s, reserved[i]) == 0)
            return true;
    return false;
}

bool rules_value_ok(const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return false;
    }
    return true;
}

/* Sets name: value in s, replacing a header of the same name. */
static int header_put(struct rule_set *s, const char *name, const char *value)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->h[i].name && strcasecmp(s->h[i].name, name) == 0) {
            char *v = strdup(value);
            if (!v)
                return -1;
            free(s->h[i].value);
            s->h[i].value = v;
            return 0;
        }
    if (s->n == RULE_HEADERS_MAX)
        return -1;
    s->h[s->n].name = strdup(name);
    s->h[s->n].value = strdup(value);
    s->n++; /* counted before the check, so rules_free frees either */
    return s->h[s->n - 1].name && s->h[s->n - 1].value ? 0 : -1;
}

static int header_parse(struct rule_set *s, const char *host, const char *name, json_t *val,
                        char *err, size_t errlen)
{
    const char *v = json_string_value(val);
    struct ph_ref refs[PH_REFS_MAX];

    if (!token_ok(name))
        return conf_fail(err, errlen, "rules: %.64s: header name \"%.64s\" is not a token", host,
                         name);
    if (name_reserved(name))
        return conf_fail(err, errlen, "rules: %.64s: header %.64s may not be set by a rule", host,
                         name);
    if (!v || json_string_length(val) != strlen(v) || strlen(v) > RULE_VALUE_MAX ||
        !rules_value_ok(v, strlen(v)))
        return conf_fail(err, errlen,
                         "rules: %.64s: header %.64s: value must be a string of at most %d bytes "
                         "without control characters",
                         host, name, RULE_VALUE_MAX);
    if (ph_scan(v, refs, PH_REFS_MAX) < 0)
        return conf_fail(err, errlen, "rules: %.64s: header %.64s: malformed ${e2b.*} placeholder",
                         host, name);
    if (header_put(s, name, v) != 0)
        return conf_fail(err, errlen, "rules: %.64s: more than %d headers, or out of memory", host,
                         RULE_HEADERS_MAX);
    return 0;
}

static int rule_parse(struct rule_set *s, const char *host, json_t *rule, char *err, size_t errlen)
{
    const char *key, *name;
    json_t *val, *hv;

    if (!json_is_object(rule))
        return conf_fail(err, errlen, "rules: %.64s: each rule must be an object", host);
    json_object_foreach(rule, key, val)
    {
        if (strcmp(key, "headers") != 0)
            return conf_fail(err, errlen, "rules: %.64s: unknown key \"%.32s\" (only headers)",
                             host, key);
        if (!json_is_object(val))
            return conf_fail(err, errlen, "rules: %.64s: \"headers\" must be an object", host);
        json_object_foreach(val, name, hv)
        {
            if (header_parse(s, host, name, hv, err, errlen) != 0)
                return -1;
        }
    }
    return 0;
}

/* "name" or "*.suffix", lower case already: the key is matched as written. */
static int pattern_parse(struct rule_set *s, const char *host)
{
    char norm[HOSTNAME_MAX + 1];
    const char *name = host;

    s->wildcard = strncmp(host, "*.", 2) == 0;
    if (s->wildcard)
        name = host + 2;
    if (hostname_normalize(name, norm) != 0 || strcmp(norm, name) != 0)
        return -1;
    snprintf(s->pattern, sizeof(s->pattern), "%s%s", s->wildcard ? "." : "", norm);
    return 0;
}

static int set_parse(struct rule_set *s, const char *host, json_t *list, char *err, size_t errlen)
{
    if (pattern_parse(s, host) != 0)
        return conf_fail(err, errlen,
                         "rules: key \"%.64s\" is not a lower-case host name or *.name wildcard",
                         host);
    if (!json_is_array(list))
        return conf_fail(err, errlen, "rules: %.64s: want an array of rules", host);
    s->h = calloc(RULE_HEADERS_MAX, sizeof(*s->h));
    if (!s->h)
        return conf_fail(err, errlen, "rules: out of memory");
    for (size_t i = 0; i < json_array_size(list); i++)
        if (rule_parse(s, host, json_array_get(list, i), err, errlen) != 0)
            return -1;
    return 0;
}

int rules_parse(json_t *obj, struct rules *r, char *err, size_t errlen)
{
    const char *host;
    json_t *list;

    memset(r, 0, sizeof(*r));
    if (!json_is_object(obj))
        return conf_fail(err, errlen, "rules: must be an object of host: [rules]");
    if (json_object_size(obj) > RULE_HOSTS_MAX)
        return conf_fail(err, errlen, "rules: more than %d hosts", RULE_HOSTS_MAX);
    r->sets = calloc(json_object_size(obj) + 1, sizeof(*r->sets));
    if (!r->sets)
        return conf_fail(err, errlen, "rules: out of memory");
    json_object_foreach(obj, host, list)
    {
        if (set_parse(&r->sets[r->n++], host, list, err, errlen) != 0) {
            rules_free(r);
            return -1;
        }
    }
    return 0;
}

void rules_free(struct rules *r)
{
    for (size_t i = 0; i < r->n; i++) {
        for (size_t j = 0; r->sets[i].h && j < r->sets[i].n; j++) {
            free(r->sets[i].h[j].name);
            free(r->sets[i].h[j].value);
        }
        free(r->sets[i].h);
    }
    free(r->sets);
    memset(r, 0, sizeof(*r));
}

const struct rule_set *rules_match(const struct rules *r, const char *name)
{
    const struct rule_set *best = NULL;
    size_t nl = strlen(name), best_len = 0;

    for (size_t i = 0; i < r->n; i++) {
        const struct rule_set *s = &r->sets[i];
        size_t sl = strlen(s->pattern);
        if (!s->wildcard && strcmp(s->pattern, name) == 0)
            return s;
        /* Strictly longer: "*.example.com" does not match the apex. */
        if (s->wildcard && nl > sl && sl > best_len && strcmp(name + nl - sl, s->pattern) == 0) {
            best = s;
            best_len = sl;
        }
    }
    return best;
}
