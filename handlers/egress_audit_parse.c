#include "egress_audit_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s", what);
    return -1;
}

/* A host name or address as the proxy writes it: letters, digits, '.', '-',
 * ':' (IPv6), at most 253 bytes. */
static int good_host(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(".-:", s[i]))
            return 0;
    return 1;
}

/* A header name: an HTTP token of at most 128 bytes. */
static int good_name(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 128)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("!#$%&'*+-.^_`|~", s[i]))
            return 0;
    return 1;
}

static int one_entry(const json_t *e, struct egress_audit_entry *out, char *err, size_t errlen)
{
    const json_t *host = json_object_get(e, "host"), *h = json_object_get(e, "headers"), *v;
    const json_t *count = json_object_get(e, "count");
    size_t i, len = 0;

    if (!json_is_object(e) || !json_is_string(host) || !good_host(json_string_value(host)))
        return fail(err, errlen, "audit[].host: a host name");
    if (!json_is_array(h) || json_array_size(h) > EGRESS_AUDIT_HEADERS_MAX)
        return fail(err, errlen, "audit[].headers: at most 32 header names");
    if (!json_is_integer(count) || json_integer_value(count) < 1 ||
        json_integer_value(count) > EGRESS_AUDIT_COUNT_MAX)
        return fail(err, errlen, "audit[].count: an integer in [1, 1000000000]");
    snprintf(out->host, sizeof(out->host), "%s", json_string_value(host));
    out->headers[0] = '\0';
    json_array_foreach(h, i, v)
    {
        if (!json_is_string(v) || !good_name(json_string_value(v)))
            return fail(err, errlen, "audit[].headers[]: a header name");
        len += (size_t)snprintf(out->headers + len, sizeof(out->headers) - len, "%s%s",
                                i ? "," : "", json_string_value(v));
    }
    out->count = (long long)json_integer_value(count);
    return 0;
}

int egress_audit_parse(const json_t *body, struct egress_audit_body *b, char *err, size_t errlen)
{
    const json_t *sb = json_object_get(body, "sandbox"), *list = json_object_get(body, "audit");
    const json_t *dropped = json_object_get(body, "dropped"), *e;
    size_t i;

    memset(b, 0, sizeof(*b));
    if (!json_is_object(body))
        return fail(err, errlen, "the body must be a JSON object");
    if (!json_is_string(sb) || json_string_length(sb) == 0 ||
        json_string_length(sb) >= sizeof(b->sandbox))
        return fail(err, errlen, "sandbox: a sandbox id");
    if (!json_is_array(list) || json_array_size(list) > EGRESS_AUDIT_ENTRIES_MAX)
        return fail(err, errlen, "audit: an array of at most 64 entries");
    if (dropped && (!json_is_integer(dropped) || json_integer_value(dropped) < 0 ||
                    json_integer_value(dropped) > EGRESS_AUDIT_COUNT_MAX))
        return fail(err, errlen, "dropped: an integer in [0, 1000000000]");
    snprintf(b->sandbox, sizeof(b->sandbox), "%s", json_string_value(sb));
    json_array_foreach(list, i, e) if (one_entry(e, &b->e[i], err, errlen) != 0) return -1;
    b->n = json_array_size(list);
    b->dropped = dropped ? (long long)json_integer_value(dropped) : 0;
    return 0;
}
