/* Path resolution and directory creation, the same for every entry point. */
#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Lexically cleans an absolute path in place: no ".", "..", or repeated slashes. */
void path_clean_abs(char *p)
{
    char *out = p;
    const char *in = p;

    while (*in != '\0') {
        while (*in == '/')
            in++;
        const char *seg = in;
        while (*in != '\0' && *in != '/')
            in++;
        size_t len = (size_t)(in - seg);
        if (len == 0 || (len == 1 && seg[0] == '.'))
            continue;
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (out > p && *--out != '/')
                ;
            continue;
        }
        *out++ = '/';
        memmove(out, seg, len);
        out += len;
    }
    if (out == p)
        *out++ = '/';
    *out = '\0';
}

int path_resolve(const char *in, const struct envd_user *u, char *out, size_t outsz, char *msg,
                 size_t msgsz)
{
    int n;

    if (in[0] == '~' && in[1] != '\0' && in[1] != '/') {
        snprintf(msg, msgsz,
                 "failed to expand path '%s' for user '%s': cannot expand user-specific home dir",
                 in, u->name);
        return -1;
    }
    if (in[0] == '~')
        n = snprintf(out, outsz, "%s/%s", u->home, in + 1);
    else if (in[0] == '/')
        n = snprintf(out, outsz, "%s", in);
    else
        n = snprintf(out, outsz, "%s/%s", u->home, in);
    if (n < 0 || (size_t)n >= outsz) {
        snprintf(msg, msgsz, "path too long: '%.200s'", in);
        return -1;
    }
    path_clean_abs(out);
    return 0;
}

int path_ensure_dirs(const char *dir, char *msg, size_t msgsz)
{
    char buf[4096];
    struct stat st;

    if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf)) {
        errno = ENAMETOOLONG;
        snprintf(msg, msgsz, "path too long");
        return -1;
    }
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
            snprintf(msg, msgsz, "failed to create directory '%s': %s", buf, strerror(errno));
            return -1;
        }
        if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            snprintf(msg, msgsz, "path is a file: %s", buf);
            return -1;
        }
        *p = saved;
        if (saved == '\0')
            return 0;
    }
}

const char *path_base(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL || slash[1] == '\0')
        return path;
    return slash + 1;
}
