/* E2B's timeout, connect, resume and refresh bodies (e2b_timeout_parse.h). */
#include "e2b_timeout_parse.h"

#include <stdio.h>

int e2b_flag_parse(const json_t *body, const char *field, char *err, size_t errlen)
{
    const json_t *v = json_object_get(body, field);

    if (!v || json_is_null(v))
        return 1;
    if (json_is_boolean(v))
        return json_is_true(v);
    snprintf(err, errlen, "%s: must be true or false", field);
    return -1;
}

long e2b_timeout_parse(const json_t *body, int required, long max, int *keep_memory, char *err,
                       size_t errlen)
{
    const json_t *v;

    if (keep_memory && (*keep_memory = e2b_flag_parse(body, "memory", err, errlen)) < 0)
        return -1;
    v = json_object_get(body, "timeout");
    if (!v && !required)
        return -2;
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= max)
        return (long)json_integer_value(v);
    snprintf(err, errlen,
             "timeout: must be an integer number of seconds in [0, %ld] (the operator's maximum)",
             max);
    return -1;
}

long e2b_refresh_parse(const json_t *body, char *err, size_t errlen)
{
    const json_t *v = json_object_get(body, "duration");

    if (!v)
        return 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0 &&
        json_integer_value(v) <= E2B_REFRESH_MAX_S)
        return (long)json_integer_value(v);
    snprintf(err, errlen, "duration: must be an integer number of seconds in [0, %d]",
             E2B_REFRESH_MAX_S);
    return -1;
}
