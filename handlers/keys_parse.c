/* The credential routes' bodies (keys_parse.h). */
#include "keys_parse.h"

#include <stdio.h>
#include <string.h>

/* allowed: ",a,b,"; the first key not in it named in err. */
static int only_fields(const json_t *body, const char *allowed, char *err, size_t errlen)
{
    const char *k;
    const json_t *v;

    json_object_foreach((json_t *)body, k, v)
    {
        char probe[80];
        snprintf(probe, sizeof(probe), ",%s,", k);
        if (!strstr(allowed, probe)) {
            snprintf(err, errlen, "%.64s: unknown field", k);
            return -1;
        }
    }
    return 0;
}

int key_create_parse(const json_t *body, enum role *role, char *err, size_t errlen)
{
    const json_t *v;

    *role = ROLE_MEMBER;
    if (only_fields(body, ",role,", err, errlen) != 0)
        return -1;
    v = json_object_get(body, "role");
    if (v && (*role = role_parse(json_string_value(v))) == ROLE_NONE) {
        snprintf(err, errlen, "role: must be \"owner\" or \"member\"");
        return -1;
    }
    return 0;
}

int jointoken_create_parse(const json_t *body, long *ttl_s, char *err, size_t errlen)
{
    const json_t *v;
    json_int_t ttl = JOINTOKEN_TTL_DEFAULT_S;

    if (only_fields(body, ",ttl_seconds,", err, errlen) != 0)
        return -1;
    v = json_object_get(body, "ttl_seconds");
    if (v && (!json_is_integer(v) || (ttl = json_integer_value(v)) < JOINTOKEN_TTL_MIN_S ||
              ttl > JOINTOKEN_TTL_MAX_S)) {
        snprintf(err, errlen, "ttl_seconds: must be an integer in [%d, %ld]", JOINTOKEN_TTL_MIN_S,
                 JOINTOKEN_TTL_MAX_S);
        return -1;
    }
    *ttl_s = (long)ttl;
    return 0;
}
