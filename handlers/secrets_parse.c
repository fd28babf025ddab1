/* E2B's /secrets bodies and queries (secrets_parse.h). */
#include "secrets_parse.h"

#include "query_int_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789._-"

int secret_name_parse(const char *in, char out[SECRET_NAME_MAX + 1], char *err, size_t errlen)
{
    size_t n = in ? strlen(in) : 0;

    if (n == 0 || n > SECRET_NAME_MAX) {
        snprintf(err, errlen, "name: 1-%d characters [a-z0-9._-] required", SECRET_NAME_MAX);
        return -1;
    }
    for (size_t i = 0; i <= n; i++) /* the NUL too */
        out[i] = (char)tolower((unsigned char)in[i]);
    if (strspn(out, NAME_CHARS) != n) {
        snprintf(err, errlen,
                 "name: only letters (stored lower-cased), digits, '.', '_' and '-' are allowed");
        return -1;
    }
    if (strncmp(out, SECRET_ID_PREFIX, strlen(SECRET_ID_PREFIX)) == 0) {
        snprintf(err, errlen, "name: the prefix \"%s\" is reserved for secret ids",
                 SECRET_ID_PREFIX);
        return -1;
    }
    return 0;
}

int secret_ref_parse(const char *in, char out[SECRET_NAME_MAX + 1])
{
    char err[8];

    if (secret_id_ok(in)) {
        snprintf(out, SECRET_NAME_MAX + 1, "%s", in);
        return 0;
    }
    return secret_name_parse(in, out, err, sizeof(err));
}

static int bad(char *err, size_t errlen, const char *field, const char *rule)
{
    snprintf(err, errlen, "%s: %s", field, rule);
    return -1;
}

/* A string with no NUL inside, n bytes: 1, else 0. */
static int plain_string(const json_t *v, size_t *n)
{
    if (!json_is_string(v))
        return 0;
    *n = json_string_length(v);
    return strlen(json_string_value(v)) == *n;
}

static int metadata_ok(const json_t *m, char *err, size_t errlen)
{
    const char *k;
    json_t *v;
    size_t total = 0, n;

    if (!json_is_object(m))
        return bad(err, errlen, "metadata", "must be an object of strings");
    if (json_object_size(m) > SECRET_META_ENTRIES_MAX)
        return bad(err, errlen, "metadata", "at most 32 entries");
    json_object_foreach((json_t *)m, k, v)
    {
        if (*k == '\0' || strlen(k) > SECRET_META_KEY_MAX)
            return bad(err, errlen, "metadata", "keys must be 1-128 bytes");
        if (!plain_string(v, &n))
            return bad(err, errlen, "metadata", "values must be strings without NUL");
        if (n > SECRET_META_VALUE_MAX)
            return bad(err, errlen, "metadata", "values must be at most 1024 bytes");
        total += strlen(k) + n;
    }
    if (total > SECRET_META_TOTAL_MAX)
        return bad(err, errlen, "metadata", "at most 8192 bytes of keys and values in all");
    return 0;
}

int secret_body_parse(const json_t *body, int create, struct secret_body *b, char *err,
                      size_t errlen)
{
    const json_t *value = json_object_get(body, "value"), *meta = json_object_get(body, "metadata");
    size_t n = 0;

    memset(b, 0, sizeof(*b));
    if (create && secret_name_parse(json_string_value(json_object_get(body, "name")), b->name, err,
                                    errlen) != 0)
        return -1;
    if (!plain_string(value, &n) || n == 0)
        return bad(err, errlen, "value", "a non-empty string without NUL required");
    if (n > SECRET_VALUE_MAX)
        return bad(err, errlen, "value", "at most 65536 bytes");
    if (meta && !json_is_null(meta)) {
        if (metadata_ok(meta, err, errlen) != 0)
            return -1;
        b->metadata = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
        if (!b->metadata)
            return bad(err, errlen, "metadata", "could not be stored");
    }
    b->value = json_string_value(value);
    return 0;
}

void secret_body_free(struct secret_body *b)
{
    free(b->metadata);
    b->metadata = NULL;
}

int secret_list_query_parse(const struct request *req, size_t *limit, char after[SECRET_ID_MAX],
                            char *err, size_t errlen)
{
    long long lim = 0;
    int got;

    if (query_int_parse(req, "limit", 1, SECRET_LIST_LIMIT_MAX, SECRET_LIST_LIMIT_MAX, &lim, err,
                        errlen) != 0)
        return -1;
    *limit = (size_t)lim;
    after[0] = '\0';
    got = request_query_strict(req, "nextToken", after, SECRET_ID_MAX);
    if (got < 0 || (got == 1 && !secret_id_ok(after))) {
        after[0] = '\0';
        return bad(err, errlen, "nextToken", "not a token this list answered");
    }
    return 0;
}
