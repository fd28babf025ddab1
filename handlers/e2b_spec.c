#include "e2b_spec.h"

#include "sandbox_spec_parse.h"

#include <stdio.h>
#include <string.h>

#define ISOLATION_KEY "corral.require_isolation"

/* Fields E2B defines that Corral does not implement: refused, never ignored. */
static int unsupported(const json_t *body, char *err, size_t errlen)
{
    static const char *const fields[] = {"mcp", "iam", "volumeMounts", NULL};
    static const char *const net[] = {"denyOut", "maskRequestHost", "rules", "egressProxy", NULL};
    const json_t *network = json_object_get(body, "network"), *v;

    if (json_is_true(json_object_get(body, "autoPause")) ||
        json_is_true(json_object_get(json_object_get(body, "autoResume"), "enabled"))) {
        snprintf(err, errlen,
                 "autoPause/autoResume: pausing sandboxes is not supported by Corral yet");
        return 501;
    }
    for (int i = 0; fields[i]; i++)
        if ((v = json_object_get(body, fields[i])) && !json_is_null(v) &&
            !(json_is_array(v) && json_array_size(v) == 0)) {
            snprintf(err, errlen, "%s: not supported by Corral yet", fields[i]);
            return 501;
        }
    for (int i = 0; net[i]; i++)
        if ((v = json_object_get(network, net[i])) && !json_is_null(v) &&
            !(json_is_array(v) && json_array_size(v) == 0)) {
            snprintf(err, errlen, "network.%s: not supported by Corral yet", net[i]);
            return 501;
        }
    return 0;
}

static int check_types(const json_t *body, char *err, size_t errlen)
{
    const json_t *v;
    static const char *const bools[] = {"secure", "allow_internet_access", "autoPause",
                                        "autoPauseMemory", NULL};

    if (!json_is_string(json_object_get(body, "templateID"))) {
        snprintf(err, errlen, "templateID: a template name is required");
        return -1;
    }
    for (int i = 0; bools[i]; i++)
        if ((v = json_object_get(body, bools[i])) && !json_is_null(v) && !json_is_boolean(v)) {
            snprintf(err, errlen, "%s: must be true or false", bools[i]);
            return -1;
        }
    v = json_object_get(body, "network");
    if (v && !json_is_null(v) && !json_is_object(v)) {
        snprintf(err, errlen, "network: must be an object");
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
    const json_t *allow = json_object_get(json_object_get(body, "network"), "allowOut");
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
    if (allow && !json_is_null(allow))
        json_object_set_new(n, "allowed_domains", json_deep_copy(allow));
    else if (json_is_false(json_object_get(body, "allow_internet_access")))
        json_object_set_new(n, "allowed_domains", json_array());
    return n;
}

/* Native field names in messages become the E2B names the caller sent. */
static void rename_field(char *err, size_t errlen)
{
    static const char *const map[][2] = {{"template", "templateID"},
                                         {"env", "envVars"},
                                         {"allowed_domains", "network.allowOut"},
                                         {"require_isolation", "metadata." ISOLATION_KEY},
                                         {NULL, NULL}};
    char rest[256];

    for (int i = 0; map[i][0]; i++) {
        size_t n = strlen(map[i][0]);
        if (strncmp(err, map[i][0], n) == 0 && (err[n] == ':' || err[n] == '[' || err[n] == '.')) {
            snprintf(rest, sizeof(rest), "%s", err + n);
            snprintf(err, errlen, "%s%s", map[i][1], rest);
            return;
        }
    }
}

int e2b_spec_parse(const json_t *body, struct sandbox_spec *spec, char *err, size_t errlen)
{
    json_t *native;
    int status;

    memset(spec, 0, sizeof(*spec));
    if (!json_is_object(body)) {
        snprintf(err, errlen, "the body must be a JSON object");
        return 400;
    }
    if (check_types(body, err, errlen) != 0)
        return 400;
    if ((status = unsupported(body, err, errlen)) != 0)
        return status;
    native = native_body(body);
    if (sandbox_spec_parse(native, spec, err, errlen) != 0) {
        json_decref(native);
        rename_field(err, errlen);
        return 400;
    }
    json_decref(native);
    /* The SDK 2.x never sends "secure": secure unless the caller says otherwise. */
    spec->secure = !json_is_false(json_object_get(body, "secure"));
    spec->public_traffic =
        !json_is_false(json_object_get(json_object_get(body, "network"), "allowPublicTraffic"));
    return 0;
}
