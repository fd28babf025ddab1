#include "env_code.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names the cell cannot mistake for its own. */
#define PY_SAVED "__corral_env_saved"

static int strings_only(const json_t *vars, char *err, size_t errlen)
{
    const char *k;
    json_t *v;

    if (!json_is_object(vars)) {
        snprintf(err, errlen, "env_vars must be an object of strings");
        return 0;
    }
    json_object_foreach((json_t *)vars, k, v)
    {
        if (!json_is_string(v) || !k[0] || strchr(k, '=')) {
            snprintf(err, errlen, "env_vars: %s must be a name without '=' and a string value", k);
            return 0;
        }
    }
    return 1;
}

static int identifiers_only(const json_t *vars, char *err, size_t errlen)
{
    const char *k;
    json_t *v;

    json_object_foreach((json_t *)vars, k, v)
    {
        (void)v;
        if (strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789") !=
                strlen(k) ||
            (k[0] >= '0' && k[0] <= '9')) {
            snprintf(err, errlen, "env_vars: %s is not a name bash can set", k);
            return 0;
        }
    }
    return 1;
}

/* A JSON object of strings, ASCII only, is a Python dict literal and a
 * JavaScript object literal as it is; its strings are R string literals
 * (no "\/": jansson does not escape '/'). */
static char *ascii_json(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
}

/* fmt with a, and b where it has a second %s (else b is ignored). */
static char *printed(const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
    char *out = malloc(n);

    if (out)
        snprintf(out, n, fmt, a, b);
    return out;
}

static char *python_set(const json_t *vars)
{
    char *json = ascii_json(vars), *code;

    if (!json)
        return NULL;
    code = printed("import os as __corral_os\n" PY_SAVED " = {k: __corral_os.environ.get(k) for k "
                   "in %s}\n__corral_os.environ.update(%s)\n",
                   json, json);
    free(json);
    return code;
}

static char *js_set(const json_t *vars)
{
    char *json = ascii_json(vars), *code;

    if (!json)
        return NULL;
    code = printed("globalThis." PY_SAVED " = {};\n"
                   "for (const [k, v] of Object.entries(%s)) {\n"
                   "  globalThis." PY_SAVED "[k] = k in process.env ? process.env[k] : null;\n"
                   "  process.env[k] = v;\n}\n",
                   json, "");
    free(json);
    return code;
}

/* One `"NAME" = "value"` argument of Sys.setenv a variable: R's own
 * literals, from their JSON forms. */
static char *r_set(const json_t *vars)
{
    json_t *names = json_array();
    const char *k;
    json_t *v;
    char *jnames, *jvals = NULL, *code = NULL;

    json_object_foreach((json_t *)vars, k, v)
    {
        (void)v;
        json_array_append_new(names, json_string(k));
    }
    jnames = ascii_json(names);
    jvals = ascii_json(vars); /* {"A":"x"} → list("A"="x") below */
    if (jnames && jvals) {
        jvals[0] = '(';
        jvals[strlen(jvals) - 1] = ')';
        for (char *p = jvals; *p; p++) /* "A":"x" → "A"="x", outside strings only */
            if (*p == '\\')
                p++;
            else if (*p == '"')
                for (p++; *p && *p != '"'; p++)
                    p += *p == '\\';
            else if (*p == ':')
                *p = '=';
        jnames[0] = '(';
        jnames[strlen(jnames) - 1] = ')';
        code = printed(".corral_env_saved <- Sys.getenv(c%s, unset = NA)\n"
                       "do.call(Sys.setenv, list%s)\n",
                       jnames, jvals);
    }
    free(jnames);
    free(jvals);
    json_decref(names);
    return code;
}

/* bash's own quoting: 'value' with each ' as '\''. A name is written six
 * times (the list, the test, the two saves, the read, the export), a value
 * at most four times its length. */
static char *bash_set(const json_t *vars)
{
    size_t n = 64;
    const char *k;
    json_t *v;

    json_object_foreach((json_t *)vars, k, v) n +=
        6 * strlen(k) + 4 * strlen(json_string_value(v)) + 96;
    char *code = malloc(n);
    if (!code)
        return NULL;
    char *p = code, *end = code + n;
    p += snprintf(p, (size_t)(end - p), "__corral_env_names=");
    json_object_foreach((json_t *)vars, k, v) p += snprintf(p, (size_t)(end - p), "%s,", k);
    p += snprintf(p, (size_t)(end - p), "\n");
    json_object_foreach((json_t *)vars, k, v)
    {
        p += snprintf(p, (size_t)(end - p),
                      "[ -n \"${%s+x}\" ] && __corral_env_had_%s=1 __corral_env_%s=\"$%s\"\n"
                      "export %s='",
                      k, k, k, k, k);
        for (const char *s = json_string_value(v); *s; s++)
            p += snprintf(p, (size_t)(end - p), *s == '\'' ? "'\\''" : "%c", *s);
        p += snprintf(p, (size_t)(end - p), "'\n");
    }
    return code;
}

char *env_code_set(const char *lang, const json_t *vars, char *err, size_t errlen)
{
    char *code = NULL;

    if (!strings_only(vars, err, errlen))
        return NULL;
    if (strcmp(lang, "python") == 0)
        code = python_set(vars);
    else if (strcmp(lang, "js") == 0 || strcmp(lang, "ts") == 0)
        code = js_set(vars);
    else if (strcmp(lang, "r") == 0)
        code = r_set(vars);
    else if (strcmp(lang, "bash") == 0 && identifiers_only(vars, err, errlen))
        code = bash_set(vars);
    else if (strcmp(lang, "bash") != 0)
        snprintf(err, errlen, "env_vars for a %s context are not supported", lang);
    return code;
}

char *env_code_apply(const json_t *vars)
{
    char *json = strings_only(vars, NULL, 0) ? ascii_json(vars) : NULL, *code;

    if (!json)
        return NULL;
    code = printed("import os as __corral_os\n__corral_os.environ.update(%s)\ndel __corral_os\n",
                   json, "");
    free(json);
    return code;
}

char *env_code_restore(const char *lang)
{
    if (strcmp(lang, "python") == 0)
        return strdup("for __corral_k, __corral_v in " PY_SAVED ".items():\n"
                      "    if __corral_v is None:\n"
                      "        __corral_os.environ.pop(__corral_k, None)\n"
                      "    else:\n"
                      "        __corral_os.environ[__corral_k] = __corral_v\n"
                      "del " PY_SAVED "\n");
    if (strcmp(lang, "js") == 0 || strcmp(lang, "ts") == 0)
        return strdup("for (const [k, v] of Object.entries(globalThis." PY_SAVED ")) {\n"
                      "  if (v === null) delete process.env[k]; else process.env[k] = v;\n"
                      "}\ndelete globalThis." PY_SAVED ";\n");
    if (strcmp(lang, "r") == 0)
        return strdup("for (.corral_k in names(.corral_env_saved)) {\n"
                      "  .corral_v <- .corral_env_saved[[.corral_k]]\n"
                      "  if (is.na(.corral_v)) Sys.unsetenv(.corral_k) else "
                      "do.call(Sys.setenv, setNames(list(.corral_v), .corral_k))\n"
                      "}\nrm(.corral_env_saved, .corral_k, .corral_v)\n");
    if (strcmp(lang, "bash") == 0)
        return strdup(
            "IFS=, read -ra __corral_env_list <<< \"$__corral_env_names\"\n"
            "for __corral_k in \"${__corral_env_list[@]}\"; do\n"
            "  __corral_h=__corral_env_had_$__corral_k __corral_v=__corral_env_$__corral_k\n"
            "  if [ -n \"${!__corral_h}\" ]; then export \"$__corral_k=${!__corral_v}\"; "
            "else unset \"$__corral_k\"; fi\n"
            "  unset \"$__corral_h\" \"$__corral_v\"\n"
            "done\nunset __corral_env_names __corral_env_list __corral_k __corral_h "
            "__corral_v\n");
    return NULL;
}
