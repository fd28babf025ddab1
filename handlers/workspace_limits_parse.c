/* The body of PATCH /v1/workspace (workspace_limits_parse.h). */
#include "workspace_limits_parse.h"

#include <stdio.h>
#include <string.h>

static int limit_index(const char *name)
{
    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        if (strcmp(name, ws_limit_defs[i].name) == 0)
            return i;
    return -1;
}

int workspace_limits_parse(const json_t *body, const long ceilings[WS_LIMIT_COUNT],
                           long limits[WS_LIMIT_COUNT], int set[WS_LIMIT_COUNT], char *err,
                           size_t errlen)
{
    const char *k;
    json_t *v;
    int i;

    json_object_foreach((json_t *)body, k, v)
    {
        if ((i = limit_index(k)) < 0) {
            snprintf(err, errlen, "%.64s: unknown or read-only field", k);
            return -1;
        }
        if (!json_is_integer(v)) {
            snprintf(err, errlen, "%s: must be an integer in [%ld, %ld]", k, ws_limit_defs[i].min,
                     ws_limit_defs[i].max);
            return -1;
        }
        if (ws_limit_check((enum ws_limit)i, (long long)json_integer_value(v), ceilings[i], err,
                           errlen) != 0)
            return -1;
        limits[i] = (long)json_integer_value(v);
        set[i] = 1;
    }
    return 0;
}
