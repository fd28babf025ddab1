/* A worker's resolve body and a sandbox's token definitions
 * (egress_resolve_parse.h). */
#include "egress_resolve_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define ID_CHARS "0123456789abcdefghijklmnopqrstuvwxyz"
#define HOST_CHARS "abcdefghijklmnopqrstuvwxyz0123456789.-"

static int bad(char *err, size_t errlen, const char *field, const char *rule)
{
    snprintf(err, errlen, "%s: %s", field, rule);
    return -1;
}

/* 1 when s is among the first n names of list. */
static int seen(char (*list)[RESOLVE_SECRET_NAME_MAX + 1], size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}

/* A placeholder's name as the SDK allows it (it sits in ${e2b.secrets.<name>}
 * or ${e2b.identity.tokens.<name>}): 1-max bytes, no '{', '}' or control
 * character, no NUL inside. */
static int name_ok(const json_t *v, size_t max)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > max || json_string_length(v) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == '{' || s[i] == '}')
            return 0;
    return 1;
}

static int secrets_of(const json_t *arr, struct resolve_body *b, char *err, size_t errlen)
{
    size_t i;
    json_t *v;
    char name[RESOLVE_SECRET_NAME_MAX + 1];

    if (arr && !json_is_null(arr) && !json_is_array(arr))
        return bad(err, errlen, "secrets", "must be an array of secret names");
    if (json_array_size(arr) > RESOLVE_NAMES_MAX)
        return bad(err, errlen, "secrets", "at most 16 names");
    json_array_foreach(arr, i, v)
    {
        if (!name_ok(v, RESOLVE_SECRET_NAME_MAX))
            return bad(err, errlen, "secrets",
                       "each must be 1-128 bytes without '{', '}' or control characters");
        snprintf(name, sizeof(name), "%s", json_string_value(v));
        for (char *p = name; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (!seen(b->secrets, b->nsecrets, name))
            memcpy(b->secrets[b->nsecrets++], name, sizeof(name));
    }
    return 0;
}

static int tokens_of(const json_t *arr, struct resolve_body *b, char *err, size_t errlen)
{
    size_t i;
    json_t *v;
    const char *s;

    if (arr && !json_is_null(arr) && !json_is_array(arr))
        return bad(err, errlen, "tokens", "must be an array of token names");
    if (json_array_size(arr) > RESOLVE_NAMES_MAX)
        return bad(err, errlen, "tokens", "at most 16 names");
    json_array_foreach(arr, i, v)
    {
        s = json_string_value(v);
        if (!name_ok(v, RESOLVE_TOKEN_NAME_MAX))
            return bad(err, errlen, "tokens",
                       "each must be 1-64 bytes without '{', '}' or control characters");
        int dup = 0;
        for (size_t j = 0; j < b->ntokens; j++)
            dup |= strcmp(b->tokens[j], s) == 0;
        if (!dup)
            snprintf(b->tokens[b->ntokens++], RESOLVE_TOKEN_NAME_MAX + 1, "%s", s);
    }
    return 0;
}

int egress_resolve_parse(const json_t *body, struct resolve_body *b, char *err, size_t errlen)
{
    const char *sb = json_string_value(json_object_get(body, "sandbox"));
    const char *host = json_string_value(json_object_get(body, "host"));
    size_t n = host ? strlen(host) : 0;

    memset(b, 0, sizeof(*b));
    if (!sb || !*sb || strlen(sb) >= sizeof(b->sandbox) || strspn(sb, ID_CHARS) != strlen(sb))
        return bad(err, errlen, "sandbox", "a sandbox id required");
    snprintf(b->sandbox, sizeof(b->sandbox), "%s", sb);
    if (!json_is_null(json_object_get(body, "host")) && json_object_get(body, "host") &&
        (n == 0 || n >= sizeof(b->host)))
        return bad(err, errlen, "host", "the destination's host name, if given");
    for (size_t i = 0; host && i <= n; i++)
        b->host[i] = (char)tolower((unsigned char)host[i]);
    if (strspn(b->host, HOST_CHARS) != n)
        return bad(err, errlen, "host", "letters, digits, '.' and '-' only");
    if (secrets_of(json_object_get(body, "secrets"), b, err, errlen) != 0 ||
        tokens_of(json_object_get(body, "tokens"), b, err, errlen) != 0)
        return -1;
    return 0;
}

int egress_resolve_token(const char *policy, const char *name, char aud[RESOLVE_AUDIENCE_MAX])
{
    json_t *p = policy && *policy ? json_loads(policy, 0, NULL) : NULL;
    json_t *def = json_object_get(json_object_get(json_object_get(p, "iam"), "tokens"), name);
    const char *a = json_string_value(json_object_get(def, "audience"));
    const char *type = json_string_value(json_object_get(def, "tokenType"));
    int ok = a && *a && strlen(a) < RESOLVE_AUDIENCE_MAX && type && strcmp(type, "JWT-SVID") == 0;

    if (ok)
        snprintf(aud, RESOLVE_AUDIENCE_MAX, "%s", a);
    json_decref(p);
    return ok;
}
