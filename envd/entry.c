/*
 * EntryInfo follows proto3 JSON: default values are left out (and so are
 * fields older SDKs do not know, like an empty metadata map), int64 size is a
 * string, modifiedTime an RFC 3339 timestamp. mode holds the permission bits,
 * permissions the ls-style string the E2B envd reports ("drwxr-xr-x").
 */
#include "entry.h"
#include "connect_rpc.h"
#include "paths.h"
#include "users.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static const char *file_type_name(mode_t mode)
{
    if (S_ISDIR(mode))
        return "FILE_TYPE_DIRECTORY";
    if (S_ISLNK(mode))
        return "FILE_TYPE_SYMLINK";
    if (S_ISREG(mode))
        return "FILE_TYPE_FILE";
    return NULL; /* sockets, devices, fifos: unspecified, left out */
}

static void permissions_string(mode_t mode, char *out)
{
    static const char rwx[] = "rwxrwxrwx";
    int n = 0;

    if (S_ISDIR(mode))
        out[n++] = 'd';
    if (S_ISLNK(mode))
        out[n++] = 'L';
    if (S_ISBLK(mode) || S_ISCHR(mode))
        out[n++] = 'D';
    if (S_ISFIFO(mode))
        out[n++] = 'p';
    if (S_ISSOCK(mode))
        out[n++] = 'S';
    if (mode & S_ISUID)
        out[n++] = 'u';
    if (mode & S_ISGID)
        out[n++] = 'g';
    if (S_ISCHR(mode))
        out[n++] = 'c';
    if (mode & S_ISVTX)
        out[n++] = 't';
    if (n == 0)
        out[n++] = '-';
    for (int i = 0; i < 9; i++)
        out[n++] = mode & (1 << (8 - i)) ? rwx[i] : '-';
    out[n] = '\0';
}

static json_t *timestamp_json(const struct timespec *ts)
{
    char buf[96], frac[32] = "";
    struct tm tm;
    long ns = ts->tv_nsec;

    gmtime_r(&ts->tv_sec, &tm);
    if (ns != 0) {
        if (ns % 1000000 == 0)
            snprintf(frac, sizeof(frac), ".%03ld", ns / 1000000);
        else if (ns % 1000 == 0)
            snprintf(frac, sizeof(frac), ".%06ld", ns / 1000);
        else
            snprintf(frac, sizeof(frac), ".%09ld", ns);
    }
    snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d%sZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
    return json_string(buf);
}

static void add_symlink_target(json_t *e, const char *path)
{
    char target[PATH_MAX];
    char *resolved = realpath(path, NULL);

    if (resolved != NULL) {
        json_object_set_new(e, "symlinkTarget", json_str_lossy(resolved));
        free(resolved);
        return;
    }
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n >= 0) {
        target[n] = '\0';
        json_object_set_new(e, "symlinkTarget", json_str_lossy(target));
    }
}

json_t *entry_info_from_stat(const char *path, const struct stat *st)
{
    json_t *e = json_object();
    const char *type = file_type_name(st->st_mode);
    char perms[24], name[64], sizebuf[32];
    json_t *meta;

    json_object_set_new(e, "name", json_str_lossy(path_base(path)));
    if (type != NULL)
        json_object_set_new(e, "type", json_string(type));
    json_object_set_new(e, "path", json_str_lossy(path));
    if (st->st_size != 0) {
        snprintf(sizebuf, sizeof(sizebuf), "%lld", (long long)st->st_size);
        json_object_set_new(e, "size", json_string(sizebuf));
    }
    if ((st->st_mode & 0777) != 0)
        json_object_set_new(e, "mode", json_integer(st->st_mode & 0777));
    permissions_string(st->st_mode, perms);
    json_object_set_new(e, "permissions", json_string(perms));
    users_uid_name(st->st_uid, name, sizeof(name));
    json_object_set_new(e, "owner", json_str_lossy(name));
    users_gid_name(st->st_gid, name, sizeof(name));
    json_object_set_new(e, "group", json_str_lossy(name));
    json_object_set_new(e, "modifiedTime", timestamp_json(&st->st_mtim));
    if (S_ISLNK(st->st_mode))
        add_symlink_target(e, path);
    meta = entry_metadata(path);
    if (json_object_size(meta) > 0)
        json_object_set_new(e, "metadata", meta);
    else
        json_decref(meta);
    return e;
}

json_t *entry_info(const char *path)
{
    struct stat st;

    if (lstat(path, &st) < 0)
        return NULL;
    return entry_info_from_stat(path, &st);
}

/* Lists the xattr names of path into a malloc'ed buffer; NULL when there are none. */
static char *list_xattrs(const char *path, ssize_t *len)
{
    ssize_t n = llistxattr(path, NULL, 0);
    char *names;

    if (n <= 0)
        return NULL;
    names = malloc((size_t)n);
    if (names == NULL)
        return NULL;
    *len = llistxattr(path, names, (size_t)n);
    if (*len <= 0) {
        free(names);
        return NULL;
    }
    return names;
}

json_t *entry_metadata(const char *path)
{
    json_t *meta = json_object();
    size_t plen = strlen(ENTRY_XATTR_PREFIX);
    ssize_t len = 0;
    char *names = list_xattrs(path, &len);
    char value[4097];

    for (char *k = names; k != NULL && k < names + len; k += strlen(k) + 1) {
        if (strncmp(k, ENTRY_XATTR_PREFIX, plen) != 0)
            continue;
        ssize_t vn = lgetxattr(path, k, value, sizeof(value) - 1);
        if (vn < 0)
            continue;
        value[vn] = '\0';
        json_object_set_new(meta, k + plen, json_str_lossy(value));
    }
    free(names);
    return meta;
}

int entry_set_metadata(const char *path, json_t *meta)
{
    size_t plen = strlen(ENTRY_XATTR_PREFIX);
    ssize_t len = 0;
    char *names = list_xattrs(path, &len);
    char key[300];
    const char *k;
    json_t *v;

    for (char *n = names; n != NULL && n < names + len; n += strlen(n) + 1)
        if (strncmp(n, ENTRY_XATTR_PREFIX, plen) == 0)
            lremovexattr(path, n);
    free(names);
    json_object_foreach(meta, k, v)
    {
        const char *s = json_string_value(v);
        snprintf(key, sizeof(key), "%s%s", ENTRY_XATTR_PREFIX, k);
        if (lsetxattr(path, key, s, strlen(s), 0) < 0)
            return -1;
    }
    return 0;
}
