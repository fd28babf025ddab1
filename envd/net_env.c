#include "net_env.h"

#include "envd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NET_ENV_MAX 8192 /* a handful of proxy variables */

int net_env_line(const char *line, char *name, size_t namesz, const char **value)
{
    size_t n = strcspn(line, "=");

    if (n == 0 || n >= namesz ||
        !((line[0] >= 'A' && line[0] <= 'Z') || (line[0] >= 'a' && line[0] <= 'z') ||
          line[0] == '_'))
        return -1;
    for (size_t i = 1; i < n; i++)
        if (!((line[i] >= 'A' && line[i] <= 'Z') || (line[i] >= 'a' && line[i] <= 'z') ||
              (line[i] >= '0' && line[i] <= '9') || line[i] == '_'))
            return -1;
    memcpy(name, line, n);
    name[n] = '\0';
    *value = line[n] == '=' ? line + n + 1 : NULL;
    return *value ? 1 : 0;
}

/* 1 when name is one of names. */
static int named(const char *name, const char *const names[])
{
    for (; *names; names++)
        if (strcmp(name, *names) == 0)
            return 1;
    return 0;
}

int net_env_apply(const char *path, const char *const names[])
{
    FILE *f = fopen(path, "re");
    char buf[NET_ENV_MAX + 1], name[128], *line, *save = NULL;
    const char *value;
    size_t len;

    if (!f)
        return errno == ENOENT ? 0 : -1;
    len = fread(buf, 1, NET_ENV_MAX, f);
    fclose(f);
    buf[len] = '\0';
    for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int rc = net_env_line(line, name, sizeof(name), &value);
        if (rc >= 0 && !named(name, names))
            envd_log("%s: %s is not a variable it may change: left alone", path, name);
        else if (rc == 1)
            setenv(name, value, 1);
        else if (rc == 0)
            unsetenv(name);
    }
    envd_log("environment changes of %s applied", path);
    return 0;
}
