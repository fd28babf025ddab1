#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s)
{
    char *end;

    while (isspace((unsigned char)*s))
        s++;
    end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

int config_load(const char *path, config_set_fn set, void *ud, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char line[1024], why[256];
    int lineno = 0;

    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        char *hash = strchr(line, '#'), *eq, *key, *value;

        lineno++;
        if (hash)
            *hash = '\0';
        key = trim(line);
        if (*key == '\0')
            continue;
        eq = strchr(key, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected key = value", path, lineno);
            fclose(f);
            return -1;
        }
        *eq = '\0';
        key = trim(key);
        value = trim(eq + 1);
        why[0] = '\0';
        if (set(ud, key, value, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "%s:%d: %s: %s", path, lineno, key, why[0] ? why : "unknown key");
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

int config_parse_int(const char *value, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(value, &end, 10);
    if (errno || end == value || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}
