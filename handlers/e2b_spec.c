#include "e2b_spec.h"

#include "e2b_network_parse.h"
#include "egress_policy.h"
#include "sandbox_spec_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ISOLATION_KEY "corral.require_isolation"

/* E2B's network fields as one policy (docs/decisions/0020): allowOut (names,
 * wildcards, IPs, CIDRs) is the allow list, denyOut (IPs and CIDRs only, as
 * E2B) the deny list, and allow_internet_access false adds 0.0.0.0/0 and ::/0
 * to it. A policy exists when any of them is given non-empty, or false.
 * prefix is "network." for a create body, "" for a network update. */
static int e2b_egress(const json_t *allow_out, const json_t *deny_out, const char *prefix,
                      int no_internet, char **egress_json, char *err, size_t errlen)
{
    char field[32];
    json_t *allow, *deny;

    *egress_json = NULL;
    snprintf(field, sizeof(field), "%sallowOut", prefix);
    if (allow_out && !json_is_null(allow_out) &&
        egress_list_check(allow_out, field,
                          EGRESS_RULE_NAME | EGRESS_RULE_WILDCARD | EGRESS_RULE_CIDR, 1, err,
                          errlen))
        return -1;
    snprintf(field, sizeof(field), "%sdenyOut", prefix);
    if (deny_out && !json_is_null(deny_out) &&
        egress_list_check(deny_out, field, EGRESS_RULE_CIDR, 0, err, errlen))
        return -1;
    allow = json_is_array(allow_out) ? json_deep_copy(allow_out) : json_array();
    deny = json_is_array(deny_out) ? json_deep_copy(deny_out) : json_array();
    if (no_internet)
        egress_deny_all(deny);
    if (json_array_size(allow) + json_array_size(deny) > 0)
        *egress_json = egress_policy_text(allow, deny);
    json_decref(allow);
    json_decref(deny);
    return 0;
}

/* The policy's parts beyond allow and deny (e2b_network_parse.h): rules,
 * upstream and iam. Any of them needs the proxy, so makes a policy when
 * allow and deny gave none. iam is the policy's iam ({"tokens"}), or NULL.
 * 0, or -1 with err. */
static int add_extras(char **egress_json, const json_t *rules, const json_t *proxy, json_t *iam,
                      const char *prefix, char *err, size_t errlen)
{
    char field[32];
    json_t *r = NULL, *u = NULL, *p;

    snprintf(field, sizeof(field), "%srules", prefix);
    if (e2b_rules_parse(rules, json_object_get(iam, "tokens"), field, &r, err, errlen) != 0)
        return -1;
    snprintf(field, sizeof(field), "%segressProxy", prefix);
    if (e2b_upstream_parse(proxy, field, &u, err, errlen) != 0) {
        json_decref(r);
        return -1;
    }
    if (!r && !u && !iam)
        return 0;
    p = *egress_json ? json_loads(*egress_json, 0, NULL)
                     : json_pack("{s:[], s:[]}", "allow", "deny");
    if (r)
        json_object_set_new(p, "rules", r);
    if (u)
        json_object_set_new(p, "upstream", u);
    if (iam)
        json_object_set(p, "iam", iam);
    free(*egress_json);
    *egress_json = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    return 0;
}

/* maskRequestHost: a host, optionally with a port, where "${PORT}" stands
 * for the port a request is for; it becomes the Host header the sandbox's
 * services are sent, so only host characters. Absent or null: "". 0, -1. */
static int mask_parse(const json_t *v, char *out, size_t outlen, char *err, size_t errlen)
{
    const char *s = json_string_value(v), *p;

    out[0] = '\0';
    if (!v || json_is_null(v))
        return 0;
    if (!s || json_string_length(v) == 0 || json_string_length(v) >= outlen)
        goto bad;
    for (p = s; *p;) {
        if (strncmp(p, "${PORT}", 7) == 0)
            p += 7;
        else if (isalnum((unsigned char)*p) || strchr(".-:[]", *p))
            p++;
        else
            goto bad;
    }
    snprintf(out, outlen, "%s", s);
    return 0;
bad:
    snprintf(err, errlen,
             "network.maskRequestHost: want a host (and port) of at most 200 bytes, where "
             "${PORT} stands for the request's port");
    return -1;
}

static int check_types(const json_t *body, char *err, size_t errlen)
{
    const json_t *v;
    static const char *const bools[] = {"secure", "allow_internet_access", "autoPause",
                                        "autoPauseMemory", NULL};
    static const char *const objects[] = {"network", "mcp", NULL};

    if (!json_is_string(json_object_get(body, "templateID"))) {
        snprintf(err, errlen, "templateID: a template name is required");
        return -1;
    }
    for (int i = 0; bools[i]; i++)
        if ((v = json_object_get(body, bools[i])) && !json_is_null(v) && !json_is_boolean(v)) {
            snprintf(err, errlen, "%s: must be true or false", bools[i]);
            return -1;
        }
    for (int i = 0; objects[i]; i++)
        if ((v = json_object_get(body, objects[i])) && !json_is_null(v) && !json_is_object(v)) {
            snprintf(err, errlen, "%s: must be an object", objects[i]);
            return -1;
        }
    v = json_object_get(json_object_get(body, "network"), "allowPublicTraffic");
    if (v && !json_is_null(v) && !json_is_boolean(v)) {
        snprintf(err, errlen, "network.allowPublicTraffic: must be true or false");
        return -1;
    }
    return 0;
}

/* The native body equivalent to an E2B NewSandbox. */
static json_t *native_body(const json_t *body)
{
    const json_t *meta = json_object_get(body, "metadata");
    const json_t *timeout = json_object_get(body, "timeout");
    json_t *n = json_object();

    json_object_set(n, "template", json_object_get(body, "templateID"));
    if (json_is_integer(timeout))
        json_object_set_new(
            n, "timeout",
            json_integer(json_integer_value(timeout) < 1 ? 1 : json_integer_value(timeout)));
    else if (timeout && !json_is_null(timeout))
        json_object_set_new(n, "timeout", json_deep_copy(timeout));
    if (meta && !json_is_null(meta))
        json_object_set_new(n, "metadata", json_deep_copy(meta));
    if (json_object_get(meta, ISOLATION_KEY))
        json_object_set(n, "require_isolation", json_object_get(meta, ISOLATION_KEY));
    if (json_object_get(body, "envVars") && !json_is_null(json_object_get(body, "envVars")))
        json_object_set(n, "env", json_object_get(body, "envVars"));
    if (json_object_get(body, "volumeMounts") &&
        !json_is_null(json_object_get(body, "volumeMounts")))
        json_object_set(n, "volume_mounts", json_object_get(body, "volumeMounts"));
    if (json_is_true(json_object_get(body, "autoPause")))
        json_object_set_new(n, "on_timeout", json_string("pause"));
    if (json_object_get(json_object_get(body, "autoResume"), "enabled"))
        json_object_set(n, "auto_resume",
                        json_object_get(json_object_get(body, "autoResume"), "enabled"));
    /* The SDK sends it only with autoPause (its keepMemory); null is absent. */
    if (json_is_boolean(json_object_get(body, "autoPauseMemory")))
        json_object_set(n, "keep_memory", json_object_get(body, "autoPauseMemory"));
    return n;
}

/* The fields of the native body as E2B's caller sent them, for messages. */
static const char *const e2b_names[SPEC_FIELD_COUNT] = {
    [SPEC_FIELD_BODY] = "body",
    [SPEC_FIELD_UNKNOWN] = "",
    [SPEC_FIELD_TEMPLATE] = "templateID",
    [SPEC_FIELD_TIMEOUT] = "timeout",
    [SPEC_FIELD_CPU_CORES] = "cpu_cores",
    [SPEC_FIELD_MEMORY_MB] = "memory_mb",
    [SPEC_FIELD_METADATA] = "metadata",
    [SPEC_FIELD_ENV] = "envVars",
    [SPEC_FIELD_ALLOWED_DOMAINS] = "allowed_domains",
    [SPEC_FIELD_SECURE] = "secure",
    /* NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one name, joined on purpose */
    [SPEC_FIELD_REQUIRE_ISOLATION] = "metadata." ISOLATION_KEY,
    [SPEC_FIELD_ON_TIMEOUT] = "autoPause",
    [SPEC_FIELD_AUTO_RESUME] = "autoResume.enabled",
    [SPEC_FIELD_KEEP_MEMORY] = "autoPauseMemory",
    [SPEC_FIELD_VOLUME_MOUNTS] = "volumeMounts",
};

int e2b_spec_parse(const json_t *body, struct sandbox_spec *spec, char *err, size_t errlen)
{
    const json_t *network, *internet;
    json_t *iam = NULL;
    struct spec_error coded;
    json_t *native;

    memset(spec, 0, sizeof(*spec));
    if (!json_is_object(body)) {
        snprintf(err, errlen, "the body must be a JSON object");
        return 400;
    }
    if (check_types(body, err, errlen) != 0)
        return 400;
    native = native_body(body);
    if (sandbox_spec_parse_coded(native, spec, &coded) != 0) {
        json_decref(native);
        spec_error_text(&coded, e2b_names, err, errlen);
        return 400;
    }
    json_decref(native);
    spec->timeout_given = 1; /* E2B's default is its own 300 s, not the workspace's */
    network = json_object_get(body, "network");
    internet = json_object_get(body, "allow_internet_access");
    if (e2b_egress(json_object_get(network, "allowOut"), json_object_get(network, "denyOut"),
                   "network.", json_is_false(internet), &spec->egress_json, err, errlen) != 0) {
        sandbox_spec_free(spec);
        return 400;
    }
    if (e2b_iam_parse(json_object_get(body, "iam"), &iam, err, errlen) != 0 ||
        add_extras(&spec->egress_json, json_object_get(network, "rules"),
                   json_object_get(network, "egressProxy"), iam, "network.", err, errlen) != 0) {
        json_decref(iam);
        sandbox_spec_free(spec);
        return 400;
    }
    json_decref(iam);
    spec->egress_policy = spec->egress_json != NULL;
    spec->internet = json_is_boolean(internet) ? json_is_true(internet) : -1;
    /* The SDK 2.x never sends "secure": secure unless the caller says otherwise. */
    spec->secure = !json_is_false(json_object_get(body, "secure"));
    spec->public_traffic =
        !json_is_false(json_object_get(json_object_get(body, "network"), "allowPublicTraffic"));
    if (mask_parse(json_object_get(network, "maskRequestHost"), spec->mask_host,
                   sizeof(spec->mask_host), err, errlen) != 0) {
        sandbox_spec_free(spec);
        return 400;
    }
    return 0;
}

static const char *const update_fields[] = {"allowOut", "denyOut",     "allow_internet_access",
                                            "rules",    "egressProxy", NULL};

static int check_update_fields(const json_t *body, char *err, size_t errlen)
{
    const char *k = first_unknown_field(body, update_fields);
    const json_t *v;

    if (k) {
        snprintf(err, errlen, "%.64s: unknown field", k);
        return -1;
    }
    v = json_object_get(body, "allow_internet_access");
    if (v && !json_is_null(v) && !json_is_boolean(v)) {
        snprintf(err, errlen, "allow_internet_access: must be true or false");
        return -1;
    }
    return 0;
}

int e2b_network_parse(const json_t *body, char **egress_json, char *err, size_t errlen)
{
    return e2b_network_parse_iam(body, NULL, egress_json, err, errlen);
}

int e2b_network_parse_iam(const json_t *body, const json_t *iam, char **egress_json, char *err,
                          size_t errlen)
{

    *egress_json = NULL;
    if (check_update_fields(body, err, errlen) != 0)
        return 400;
    if (e2b_egress(json_object_get(body, "allowOut"), json_object_get(body, "denyOut"), "",
                   json_is_false(json_object_get(body, "allow_internet_access")), egress_json, err,
                   errlen) != 0 ||
        add_extras(egress_json, json_object_get(body, "rules"),
                   json_object_get(body, "egressProxy"), (json_t *)iam, "", err, errlen) != 0) {
        free(*egress_json);
        *egress_json = NULL;
        return 400;
    }
    return 0;
}
