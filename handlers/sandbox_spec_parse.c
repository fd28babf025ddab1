#include "sandbox_spec_parse.h"

#include "volume.h"

#include "egress_policy.h"
#include "sandbox_store.h"
#include "template_build_parse.h"

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

/* A template's name, with an optional ":tag" of the workspace's own
 * templates (docs/templates.md). */
static int valid_template_ref(const char *s)
{
    const char *colon = strchr(s, ':');
    char name[65];

    if (!colon)
        return valid_name(s, 64);
    if ((size_t)(colon - s) >= sizeof(name))
        return 0;
    snprintf(name, sizeof(name), "%.*s", (int)(colon - s), s);
    return valid_name(name, 64) && template_tag_ok(colon + 1);
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

/* Records the field and rule broken (and the key at fault, if any); -1. */
static int fail(struct spec_error *e, enum spec_field field, enum spec_rule rule, const char *key)
{
    e->field = field;
    e->rule = rule;
    snprintf(e->key, sizeof(e->key), "%.64s", key ? key : "");
    e->detail[0] = '\0';
    return -1;
}

/* An object of string values, every key accepted by key_ok. */
static int check_string_map(const json_t *v, enum spec_field field, size_t max,
                            int (*key_ok)(const char *), struct spec_error *e)
{
    const char *k;
    json_t *val;

    if (!json_is_object(v))
        return fail(e, field, SPEC_RULE_MAP_TYPE, NULL);
    if (json_object_size(v) > max)
        return fail(e, field, SPEC_RULE_MAP_SIZE, NULL);
    json_object_foreach((json_t *)v, k, val)
    {
        if (!key_ok(k))
            return fail(e, field, SPEC_RULE_MAP_KEY, k);
        if (!json_is_string(val) || json_string_length(val) > 4096)
            return fail(e, field, SPEC_RULE_MAP_VALUE, k);
    }
    return 0;
}

static int metadata_key_ok(const char *k)
{
    size_t n = strlen(k);
    return n > 0 && n <= 128;
}

/* allowed_domains (names and "*." wildcards) as a policy: those, and nothing
 * else. 0; -1 with err the list's fault, field named as given; -2 no memory. */
static int native_egress(const json_t *allowed, const char *field, char **egress_json, char *err,
                         size_t errlen)
{
    json_t *deny;

    *egress_json = NULL;
    if (!allowed || json_is_null(allowed))
        return 0;
    if (egress_list_check(allowed, field, EGRESS_RULE_NAME | EGRESS_RULE_WILDCARD, 1, err,
                          errlen) != 0)
        return -1;
    deny = json_array();
    egress_deny_all(deny);
    *egress_json = egress_policy_text(allowed, deny);
    json_decref(deny);
    if (!*egress_json) {
        snprintf(err, errlen, "out of memory");
        return -2;
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
    return native_egress(json_object_get(body, "allowed_domains"), "allowed_domains", egress_json,
                         err, errlen) == 0
               ? 0
               : -1;
}

static int parse_secure(const json_t *v, struct spec_error *e)
{
    if (json_is_true(v))
        return 0;
    return fail(e, SPEC_FIELD_SECURE, json_is_false(v) ? SPEC_RULE_SECURE_FALSE : SPEC_RULE_VALUE,
                NULL);
}

static int parse_isolation(const json_t *v, struct sandbox_spec *spec, struct spec_error *e)
{
    if (!json_is_string(v) || tier_parse(json_string_value(v), &spec->require) != 0)
        return fail(e, SPEC_FIELD_REQUIRE_ISOLATION, SPEC_RULE_VALUE, NULL);
    if (spec->require == TIER_UNKNOWN)
        return fail(e, SPEC_FIELD_REQUIRE_ISOLATION, SPEC_RULE_TIER_UNKNOWN, NULL);
    spec->has_require = 1;
    return 0;
}

static int parse_numbers(const json_t *body, struct sandbox_spec *spec, struct spec_error *e)
{
    const json_t *v;

    if ((v = json_object_get(body, "timeout"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 86400)
            return fail(e, SPEC_FIELD_TIMEOUT, SPEC_RULE_VALUE, NULL);
        spec->timeout_s = (long)json_integer_value(v);
        spec->timeout_given = 1;
    }
    if ((v = json_object_get(body, "cpu_cores"))) {
        double c = json_number_value(v);
        if (!json_is_number(v) || !isfinite(c) || c <= 0 || c > 64)
            return fail(e, SPEC_FIELD_CPU_CORES, SPEC_RULE_VALUE, NULL);
        spec->cpu_cores = c;
    }
    if ((v = json_object_get(body, "memory_mb"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 16 || json_integer_value(v) > 262144)
            return fail(e, SPEC_FIELD_MEMORY_MB, SPEC_RULE_VALUE, NULL);
        spec->memory_mb = (long)json_integer_value(v);
    }
    return 0;
}

const char *const spec_native_names[SPEC_FIELD_COUNT] = {
    [SPEC_FIELD_BODY] = "body",
    [SPEC_FIELD_UNKNOWN] = "",
    [SPEC_FIELD_TEMPLATE] = "template",
    [SPEC_FIELD_TIMEOUT] = "timeout",
    [SPEC_FIELD_CPU_CORES] = "cpu_cores",
    [SPEC_FIELD_MEMORY_MB] = "memory_mb",
    [SPEC_FIELD_METADATA] = "metadata",
    [SPEC_FIELD_ENV] = "env",
    [SPEC_FIELD_ALLOWED_DOMAINS] = "allowed_domains",
    [SPEC_FIELD_SECURE] = "secure",
    [SPEC_FIELD_REQUIRE_ISOLATION] = "require_isolation",
    [SPEC_FIELD_ON_TIMEOUT] = "on_timeout",
    [SPEC_FIELD_AUTO_RESUME] = "auto_resume",
    [SPEC_FIELD_KEEP_MEMORY] = "keep_memory",
    [SPEC_FIELD_VOLUME_MOUNTS] = "volume_mounts",
};

static const char mounts_rule[] =
    "must be at most 8 of {\"name\": a volume's name, \"path\": an absolute path, not /, "
    "/proc, /sys, /dev or /.corral}, each path once";

static const char keep_memory_rule[] =
    "must be true or false, and false only with on_timeout \"pause\" and without auto_resume "
    "(a sandbox paused without its memory boots afresh, only when asked)";

#define TEMPLATE_RULE "must be a name of 1-64 characters [a-z0-9._-], with an optional :tag"

/* SPEC_RULE_VALUE in each field's own words. */
static const char *const value_rules[SPEC_FIELD_COUNT] = {
    [SPEC_FIELD_TEMPLATE] = TEMPLATE_RULE,
    [SPEC_FIELD_TIMEOUT] = "must be an integer number of seconds in [1, 86400]",
    [SPEC_FIELD_CPU_CORES] = "must be a number in (0, 64]",
    [SPEC_FIELD_MEMORY_MB] = "must be an integer in [16, 262144]",
    [SPEC_FIELD_SECURE] = "must be true (native sandboxes always have an envd access token)",
    [SPEC_FIELD_REQUIRE_ISOLATION] = "must be one of NONE, CONTAINER, GVISOR, MICROVM",
    [SPEC_FIELD_ON_TIMEOUT] = "must be \"kill\" or \"pause\"",
    [SPEC_FIELD_AUTO_RESUME] = "must be true or false, and true only with on_timeout \"pause\"",
    [SPEC_FIELD_KEEP_MEMORY] = keep_memory_rule,
    [SPEC_FIELD_VOLUME_MOUNTS] = mounts_rule,
};

static size_t map_max(enum spec_field f)
{
    return f == SPEC_FIELD_ENV ? MAX_ENV : MAX_METADATA;
}

void spec_error_text(const struct spec_error *e, const char *const names[SPEC_FIELD_COUNT],
                     char *out, size_t outlen)
{
    const char *name = names[e->field], *rule = value_rules[e->field];

    switch (e->rule) {
    case SPEC_RULE_NOT_OBJECT:
        snprintf(out, outlen, "the body must be a JSON object");
        break;
    case SPEC_RULE_UNKNOWN_FIELD:
        snprintf(out, outlen, "%s: unknown field", e->key);
        break;
    case SPEC_RULE_WORKSPACE:
        snprintf(out, outlen, "%s: the workspace comes from the API key; do not send it", e->key);
        break;
    case SPEC_RULE_VALUE:
        snprintf(out, outlen, "%s: %s", name, rule ? rule : "invalid value");
        break;
    case SPEC_RULE_MAP_TYPE:
        snprintf(out, outlen, "%s: must be an object of strings", name);
        break;
    case SPEC_RULE_MAP_SIZE:
        snprintf(out, outlen, "%s: at most %zu entries", name, map_max(e->field));
        break;
    case SPEC_RULE_MAP_KEY:
        snprintf(out, outlen, "%s: invalid key '%s'", name, e->key);
        break;
    case SPEC_RULE_MAP_VALUE:
        snprintf(out, outlen, "%s.%s: must be a string of at most 4096 bytes", name, e->key);
        break;
    case SPEC_RULE_SECURE_FALSE:
        snprintf(out, outlen,
                 "%s: native sandboxes always have an envd access token; omit the field or "
                 "send true",
                 name);
        break;
    case SPEC_RULE_TIER_UNKNOWN:
        snprintf(out, outlen,
                 "%s: UNKNOWN satisfies no requirement; use NONE, CONTAINER, GVISOR or MICROVM",
                 name);
        break;
    case SPEC_RULE_EGRESS:
        snprintf(out, outlen, "%s%s", name, e->detail);
        break;
    case SPEC_RULE_OUT_OF_MEMORY:
        snprintf(out, outlen, "out of memory");
        break;
    }
}

static const char *const known_fields[] = {
    "template",    "timeout",         "metadata",          "env",    "cpu_cores",
    "memory_mb",   "allowed_domains", "require_isolation", "secure", "on_timeout",
    "auto_resume", "volume_mounts",   "keep_memory",       NULL};

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

static int check_fields(const json_t *body, struct spec_error *e)
{
    const char *k = first_unknown_field(body, known_fields);

    if (k &&
        (strcmp(k, "workspace") == 0 || strcmp(k, "workspace_id") == 0 || strcmp(k, "tenant") == 0))
        return fail(e, SPEC_FIELD_UNKNOWN, SPEC_RULE_WORKSPACE, k);
    if (k)
        return fail(e, SPEC_FIELD_UNKNOWN, SPEC_RULE_UNKNOWN_FIELD, k);
    return 0;
}

static char *dump_or(const json_t *v, const char *dflt)
{
    return v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : strdup(dflt);
}

static int parse_template(const json_t *body, struct sandbox_spec *spec, struct spec_error *e)
{
    const json_t *v = json_object_get(body, "template");

    if (!v)
        return 0;
    if (!json_is_string(v) || !valid_template_ref(json_string_value(v)))
        return fail(e, SPEC_FIELD_TEMPLATE, SPEC_RULE_VALUE, NULL);
    snprintf(spec->template_id, sizeof(spec->template_id), "%s", json_string_value(v));
    return 0;
}

/* allowed_domains as the create's policy; its fault (if any) into e. */
static int parse_allowed(const json_t *allowed, struct sandbox_spec *spec, struct spec_error *e)
{
    int rv = native_egress(allowed, "", &spec->egress_json, e->detail, sizeof(e->detail));

    if (rv == 0)
        return 0;
    e->field = SPEC_FIELD_ALLOWED_DOMAINS;
    e->rule = rv == -2 ? SPEC_RULE_OUT_OF_MEMORY : SPEC_RULE_EGRESS;
    e->key[0] = '\0';
    return -1;
}

/* The fields a create may leave out, and the ones it can only take one way. */
static void spec_defaults(struct sandbox_spec *spec)
{
    memset(spec, 0, sizeof(*spec));
    snprintf(spec->template_id, sizeof(spec->template_id), SANDBOX_DEFAULT_TEMPLATE);
    spec->timeout_s = SANDBOX_DEFAULT_TIMEOUT_S;
    spec->cpu_cores = SANDBOX_DEFAULT_CPU_CORES;
    spec->memory_mb = SANDBOX_DEFAULT_MEMORY_MB;
    spec->public_traffic = SANDBOX_DEFAULT_PUBLIC;
    spec->secure = 1;
    spec->internet = -1;
    spec->keep_memory = 1;
}

/* What the deadline does (decision 0044): kill, or pause; auto_resume (traffic
 * resumes it) only means something for a sandbox that pauses. keep_memory
 * false (decision 0074: the deadline's pause keeps only the files) likewise,
 * and not with auto_resume, as E2B: a fresh boot is asked for, never set off
 * by whatever traffic comes. */
static int parse_lifecycle(const json_t *body, struct sandbox_spec *spec, struct spec_error *e)
{
    const json_t *on = json_object_get(body, "on_timeout"),
                 *ar = json_object_get(body, "auto_resume"),
                 *km = json_object_get(body, "keep_memory");

    if (on && !json_is_null(on)) {
        if (!json_is_string(on) || (strcmp(json_string_value(on), "kill") != 0 &&
                                    strcmp(json_string_value(on), "pause") != 0))
            return fail(e, SPEC_FIELD_ON_TIMEOUT, SPEC_RULE_VALUE, NULL);
        spec->pause_on_timeout = strcmp(json_string_value(on), "pause") == 0;
    }
    if (ar && !json_is_null(ar)) {
        if (!json_is_boolean(ar) || (json_is_true(ar) && !spec->pause_on_timeout))
            return fail(e, SPEC_FIELD_AUTO_RESUME, SPEC_RULE_VALUE, NULL);
        spec->auto_resume = json_is_true(ar);
    }
    if (km && !json_is_null(km)) {
        if (!json_is_boolean(km) ||
            (json_is_false(km) && (!spec->pause_on_timeout || spec->auto_resume)))
            return fail(e, SPEC_FIELD_KEEP_MEMORY, SPEC_RULE_VALUE, NULL);
        spec->keep_memory = json_is_true(km);
    }
    return 0;
}

/* volume_mounts: [{name, path}], checked here; which volumes the names are
 * (and their worker) is the scheduler's to find (volume_resolve). */
static int parse_mounts(const json_t *v, struct sandbox_spec *spec, struct spec_error *e)
{
    json_t *m;
    size_t i;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v) || json_array_size(v) > VOLUME_MOUNTS_MAX)
        return fail(e, SPEC_FIELD_VOLUME_MOUNTS, SPEC_RULE_VALUE, NULL);
    json_array_foreach(v, i, m)
    {
        const char *path = json_string_value(json_object_get(m, "path"));
        if (!json_is_object(m) || json_object_size(m) != 2 ||
            !volume_name_ok(json_string_value(json_object_get(m, "name"))) || !volume_path_ok(path))
            return fail(e, SPEC_FIELD_VOLUME_MOUNTS, SPEC_RULE_VALUE, NULL);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(path, json_string_value(json_object_get(json_array_get(v, k), "path"))))
                return fail(e, SPEC_FIELD_VOLUME_MOUNTS, SPEC_RULE_VALUE, NULL);
    }
    if (json_array_size(v) > 0 && !(spec->mounts_json = json_dumps(v, JSON_COMPACT)))
        return fail(e, SPEC_FIELD_BODY, SPEC_RULE_OUT_OF_MEMORY, NULL);
    return 0;
}

static int parse_maps(const json_t *body, struct sandbox_spec *spec, struct spec_error *e)
{
    const json_t *v, *meta = json_object_get(body, "metadata"), *env = json_object_get(body, "env");

    if ((meta && check_string_map(meta, SPEC_FIELD_METADATA, MAX_METADATA, metadata_key_ok, e)) ||
        (env && check_string_map(env, SPEC_FIELD_ENV, MAX_ENV, valid_env_name, e)) ||
        parse_allowed(json_object_get(body, "allowed_domains"), spec, e) ||
        parse_mounts(json_object_get(body, "volume_mounts"), spec, e) ||
        ((v = json_object_get(body, "secure")) && parse_secure(v, e)))
        return -1;
    if ((v = json_object_get(body, "require_isolation")) && !json_is_null(v) &&
        parse_isolation(v, spec, e))
        return -1;
    return 0;
}

int sandbox_spec_parse_coded(const json_t *body, struct sandbox_spec *spec, struct spec_error *e)
{
    const json_t *allowed = json_object_get(body, "allowed_domains");

    spec_defaults(spec);
    if (!json_is_object(body))
        return fail(e, SPEC_FIELD_BODY, SPEC_RULE_NOT_OBJECT, NULL);
    if (check_fields(body, e) || parse_numbers(body, spec, e) || parse_template(body, spec, e) ||
        parse_lifecycle(body, spec, e))
        return -1;
    if (parse_maps(body, spec, e)) {
        sandbox_spec_free(spec);
        return -1;
    }
    spec->egress_policy = spec->egress_json != NULL;
    spec->metadata_json = dump_or(json_object_get(body, "metadata"), "{}");
    spec->env_json = dump_or(json_object_get(body, "env"), "{}");
    spec->allowed_json = dump_or(json_is_null(allowed) ? NULL : allowed, "[]");
    if (!spec->metadata_json || !spec->env_json || !spec->allowed_json) {
        sandbox_spec_free(spec);
        return fail(e, SPEC_FIELD_BODY, SPEC_RULE_OUT_OF_MEMORY, NULL);
    }
    return 0;
}

int sandbox_spec_parse(const json_t *body, struct sandbox_spec *spec, char *err, size_t errlen)
{
    struct spec_error e;

    if (sandbox_spec_parse_coded(body, spec, &e) == 0)
        return 0;
    spec_error_text(&e, spec_native_names, err, errlen);
    return -1;
}
