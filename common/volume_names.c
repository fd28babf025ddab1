#include "volume_names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int volume_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;

    if (n == 0 || n > 64 || !isalnum((unsigned char)name[0]))
        return 0;
    for (; *name; name++)
        if (!isalnum((unsigned char)*name) && !strchr("._-", *name))
            return 0;
    return 1;
}

int volume_id_ok(const char *id)
{
    return id && strncmp(id, "vol-", 4) == 0 && strlen(id) == 24 &&
           strspn(id + 4, "0123456789abcdef") == 20;
}

int volume_path_ok(const char *p)
{
    static const char *const off[] = {"/proc", "/sys", "/dev", "/.corral", NULL};
    size_t n = p ? strlen(p) : 0;

    if (n < 2 || n > 255 || p[0] != '/' || p[n - 1] == '/' || strstr(p, "//") || strstr(p, "/./") ||
        strstr(p, "/../") || (n >= 3 && !strcmp(p + n - 3, "/..")) ||
        (n >= 2 && !strcmp(p + n - 2, "/.")) || strpbrk(p, ":,\n"))
        return 0;
    for (int i = 0; off[i]; i++) {
        size_t k = strlen(off[i]);
        if (!strncmp(p, off[i], k) && (p[k] == '\0' || p[k] == '/'))
            return 0;
    }
    return 1;
}

int volume_docker_name_ok(const char *name)
{
    return name && strncmp(name, "corral-", 7) == 0 && volume_id_ok(name + 7);
}

void volume_docker_name(const char *id, char *out, size_t len)
{
    snprintf(out, len, "corral-%s", id);
}
