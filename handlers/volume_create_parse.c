/* A volume create's body (volume_create_parse.h). */
#include "volume_create_parse.h"

#include "volume_names.h"

#include <stdio.h>

int volume_create_parse(const json_t *body, const char **name, char *err, size_t errlen)
{
    *name = json_string_value(json_object_get(body, "name"));
    if (!volume_name_ok(*name)) {
        snprintf(err, errlen,
                 "name: 1-64 characters [A-Za-z0-9._-], starting with a letter or digit");
        return -1;
    }
    return 0;
}
