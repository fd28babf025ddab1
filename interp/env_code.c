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

char *env_code_set(const char *lang, const json_t *vars, char *err, size_t errlen)
{
    char *json, *code = NULL;
    size_t n;

    if (!strings_only(vars, err, errlen))
        return NULL;
    if (strcmp(lang, "python") != 0) {
        snprintf(err, errlen, "env_vars for a %s context are not supported yet", lang);
        return NULL;
    }
    /* A JSON object of strings is a Python dict literal as it is. */
    json = json_dumps(vars, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!json)
        return NULL;
    n = strlen(json) * 2 + 256;
    code = malloc(n);
    if (code)
        snprintf(code, n,
                 "import os as __corral_os\n"
                 "%s = {k: __corral_os.environ.get(k) for k in %s}\n"
                 "__corral_os.environ.update(%s)\n",
                 PY_SAVED, json, json);
    free(json);
    return code;
}

char *env_code_restore(const char *lang)
{
    if (strcmp(lang, "python") != 0)
        return NULL;
    return strdup("for __corral_k, __corral_v in " PY_SAVED ".items():\n"
                  "    if __corral_v is None:\n"
                  "        __corral_os.environ.pop(__corral_k, None)\n"
                  "    else:\n"
                  "        __corral_os.environ[__corral_k] = __corral_v\n"
                  "del " PY_SAVED "\n");
}
