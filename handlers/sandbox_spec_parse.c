#include "sandbox_spec_parse.h"

#include "egress_policy.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_METADATA 64
#define MAX_ENV 256

int valid_name(const char *s, size_t max)
{
    size_t n = strlen(s);

    if (n == 0 || n > max || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || strchr("._-", s[i])))
            return 0;
    return 1;
}

static int valid_env_name(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

/* An object of string values, every key accepted by key_ok. */
static int check_string_map(const json_t *v, const char *field, size_t max,
                            int (*key_ok)(const char *), char *err, size_t errlen)
{
    const char *k;
    json_t *val;

    if (!json_is_object(v)) {
        snprintf(err, errlen, "%s: must be an object of strings", field);
        return -1;
    }
    if (json_object_size(v) > max) {
        snprintf(err, errlen, "%s: at most %zu entries", field, max);
        return -1;
    }
    json_object_foreach((json_t *)v, k, val)
    {
        if (!key_ok(k)) {
            snprintf(err, errlen, "%s: invalid key '%.64s'", field, k);
            return -1;
        }
        if (!json_is_string(val) || json_string_length(val) > 4096) {
            snprintf(err, errlen, "%s.%.64s: must be a string of at most 4096 bytes", field, k);
            return -1;
        }
    }
    return 0;
}

static int metadata_key_ok(const char *k)
{
    size_t n = strlen(k);
    return n > 0 && n <= 128;
}

/* allowed_domains (names and "*." wildcards) as a policy: those, and nothing else. */
static int native_egress(const json_t *allowed, char **egress_json, char *err, size_t errlen)
{
    json_t *deny;

    *egress_json = NULL;
    if (!allowed || json_is_null(allowed))
        return 0;
    if (egress_list_check(allowed, "allowed_domains", EGRESS_RULE_NAME | EGRESS_RULE_WILDCARD, 1,
                          err, errlen) != 0)
        return -1;
    deny = json_array();
    egress_deny_all(deny);
    *egress_json = egress_policy_text(allowed, deny);
    json_decref(deny);
    if (!*egress_json) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int sandbox_network_parse(const json_t *body, char **egress_json, char *err, size_t errlen)
{
    static const char *const fields[] = {"allowed_domains", NULL};
    const char *k = first_unknown_field(body, fields);

    *egress_json = NULL;
    if (k) {
        snprintf(err, errlen,
                 "%.64s: unknown field (send {\"allowed_domains\": [...]} or "
                 "{\"allowed_domains\": null})",
                 k);
        return -1;
    }
    if (!json_object_get(body, "allowed_domains")) {
        snprintf(err, errlen,
                 "allowed_domains: required (an array of host names, or null for no policy)");
        return -1;
    }
    return native_egress(json_object_get(body, "allowed_domains"), egress_json, err, errlen);
}

static int parse_secure(const json_t *v, char *err, size_t errlen)
{
    if (json_is_true(v))
        return 0;
    snprintf(err, errlen,
             json_is_false(v) ? "secure: native sandboxes always have an envd access token; "
                                "omit the field or send true"
                              : "secure: must be true (native sandboxes always have an envd "
                                "access token)");
    return -1;
}

static int parse_isolation(const json_t *v, struct sandbox_spec *spec, char *err, size_t errlen)
{
    if (!json_is_string(v) || tier_parse(json_string_value(v), &spec->require) != 0) {
        snprintf(err, errlen, "require_isolation: must be one of NONE, CONTAINER, GVISOR, MICROVM");
        return -1;
    }
    if (spec->require == TIER_UNKNOWN) {
        snprintf(err, errlen,
                 "require_isolation: UNKNOWN satisfies no requirement; use NONE, "
                 "CONTAINER, GVISOR or MICROVM");
        return -1;
    }
    spec->has_require = 1;
    return 0;
}

static int parse_numbers(const json_t *body, struct sandbox_spec *spec, char *err, size_t errlen)
{
    const json_t *v;

    if ((v = json_object_get(body, "timeout"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 86400) {
            snprintf(err, errlen, "timeout: must be an integer number of seconds in [1, 86400]");
            return -1;
        }
        spec->timeout_s = (long)json_integer_value(v);
    }
    if ((v = json_object_get(body, "cpu_cores"))) {
        double c = json_number_value(v);
        if (!json_is_number(v) || !isfinite(c) || c <= 0 || c > 64) {
            snprintf(err, errlen, "cpu_cores: must be a number in (0, 64]");
            return -1;
        }
        spec->cpu_cores = c;
    }
    if ((v = json_object_get(body, "memory_mb"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 16 || json_integer_value(v) > 262144) {
            snprintf(err, errlen, "memory_mb: must be an integer in [16, 262144]");
            return -1;
        }
        spec->memory_mb = (long)json_integer_value(v);
    }
    return 0;
}

static const char *const known_fields[] = {
    "template",  "timeout",         "metadata",          "env",    "cpu_cores",
    "memory_mb", "allowed_domains", "require_isolation", "secure", NULL};

const char *first_unknown_field(const json_t *body, const char *const known[])
{
    const char *k;
    json_t *v;

    json_object_foreach((json_t *)body, k, v)
    {
        int found = 0;
        for (int i = 0; known[i]; i++)
            found |= strcmp(k, known[i]) == 0;
        if (!found)
            return k;
    }
    return NULL;
}

static int check_fields(const json_t *body, char *err, size_t errlen)
{
    const char *k = first_unknown_field(body, known_fields);

    if (k && (strcmp(k, "workspace") == 0 || strcmp(k, "workspace_id") == 0 ||
              strcmp(k, "tenant") == 0)) {
        snprintf(err, errlen, "%s: the workspace comes from the API key; do not send it", k);
        return -1;
    }
    if (k) {
        snprintf(err, errlen, "%.64s: unknown field", k);
        return -1;
    }
    return 0;
}

static char *dump_or(const json_t *v, const char *dflt)
{
    return v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : strdup(dflt);
}

int sandbox_spec_parse(const json_t *body, struct sandbox_spec *spec, char *err, size_t errlen)
{
    const json_t *v, *meta, *env, *allowed;

    memset(spec, 0, sizeof(*spec));
    snprintf(spec->template_id, sizeof(spec->template_id), "base");
    spec->timeout_s = 300;
    spec->cpu_cores = 1;
    spec->memory_mb = 512;
    spec->public_traffic = 1;
    if (!json_is_object(body)) {
        snprintf(err, errlen, "the body must be a JSON object");
        return -1;
    }
    if (check_fields(body, err, errlen) || parse_numbers(body, spec, err, errlen))
        return -1;
    if ((v = json_object_get(body, "template"))) {
        if (!json_is_string(v) || !valid_name(json_string_value(v), 64)) {
            snprintf(err, errlen, "template: must be a name of 1-64 characters [a-z0-9._-]");
            return -1;
        }
        snprintf(spec->template_id, sizeof(spec->template_id), "%s", json_string_value(v));
    }
    meta = json_object_get(body, "metadata");
    env = json_object_get(body, "env");
    allowed = json_object_get(body, "allowed_domains");
    if ((meta && check_string_map(meta, "metadata", MAX_METADATA, metadata_key_ok, err, errlen)) ||
        (env && check_string_map(env, "env", MAX_ENV, valid_env_name, err, errlen)) ||
        native_egress(allowed, &spec->egress_json, err, errlen) ||
        ((v = json_object_get(body, "secure")) && parse_secure(v, err, errlen))) {
        sandbox_spec_free(spec);
        return -1;
    }
    if ((v = json_object_get(body, "require_isolation")) && !json_is_null(v) &&
        parse_isolation(v, spec, err, errlen)) {
        sandbox_spec_free(spec);
        return -1;
    }
    spec->egress_policy = spec->egress_json != NULL;
    spec->secure = 1;
    spec->internet = -1;
    spec->metadata_json = dump_or(meta, "{}");
    spec->env_json = dump_or(env, "{}");
    spec->allowed_json = dump_or(json_is_null(allowed) ? NULL : allowed, "[]");
    if (!spec->metadata_json || !spec->env_json || !spec->allowed_json) {
        sandbox_spec_free(spec);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
