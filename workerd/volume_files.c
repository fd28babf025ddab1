/* volume_files.c: see volume_files.h for the rules every function keeps. */
#include "volume_files.h"

#include "secret.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define REMOVE_DEPTH_MAX 256 /* directory levels a remove descends (a descriptor each) */

/* An errno as an answer. */
static int fail(int err, const char *what, char *why, size_t whylen)
{
    static const struct {
        int err, code;
        const char *text;
    } table[] = {
        {ENOENT, 404, "not found"},
        {ENOTDIR, 404, "not found (a part of the path is not a directory)"},
        {EEXIST, 409, "exists already"},
        {ENOTEMPTY, 409, "directory not empty"},
        {EISDIR, 409, "is a directory"},
        {ELOOP, 400, "too many symbolic links"},
        {EXDEV, 400, "leads out of the volume"},
        {ENAMETOOLONG, 400, "name too long, or too deep"},
        {ENOSPC, 507, "no space left for the volume"},
        {EDQUOT, 507, "no space left for the volume"},
    };

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (table[i].err == err) {
            snprintf(why, whylen, "%s: %s", what, table[i].text);
            return table[i].code;
        }
    snprintf(why, whylen, "%s: %s", what, strerror(err));
    return 500;
}

/* path resolved inside root; the descriptor or -1 with errno. */
static int resolve(int root, const char *path, int flags)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};

    return (int)syscall(SYS_openat2, root, path[0] ? path : ".", &how, sizeof(how));
}

/* Splits "a/b/c" into its directory "a/b" and name "c" ("c": "" and "c"). */
static void split(const char *path, char *dir, size_t dlen, const char **name)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;

    if (n >= dlen)
        n = dlen - 1;
    memcpy(dir, path, n);
    dir[n] = '\0';
    *name = slash ? slash + 1 : path;
}

/* The directory holding path's final name, as an O_PATH descriptor. */
static int parent_of(int root, const char *path, const char **name)
{
    char dir[4096];

    split(path, dir, sizeof(dir), name);
    return resolve(root, dir, O_PATH | O_DIRECTORY);
}

/* fd's magic link: the very inode fd is open on, no name looked up again. */
static void proc_fd(int fd, char out[40])
{
    snprintf(out, 40, "/proc/self/fd/%d", fd);
}

/* Reopens an O_PATH descriptor of a regular file or directory for flags. */
static int reopen(int fd, int flags)
{
    char p[40];

    proc_fd(fd, p);
    return open(p, flags | O_CLOEXEC | O_NOCTTY);
}

static void iso_time(struct timespec t, char *out, size_t len)
{
    struct tm tm;
    char s[32];

    gmtime_r(&t.tv_sec, &tm);
    strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, len, "%s.%09ldZ", s, t.tv_nsec);
}

/* VolumeEntryStat: name, type, path ("/" + path), size, mode (permission
 * bits), uid, gid, times, and a symlink's target. */
static json_t *entry(const char *path, const struct stat *st, const char *target)
{
    const char *slash = strrchr(path, '/'), *type = "unknown";
    char abs[4100], at[48], mt[48], ct[48];
    json_t *o;

    if (S_ISREG(st->st_mode))
        type = "file";
    else if (S_ISDIR(st->st_mode))
        type = "directory";
    else if (S_ISLNK(st->st_mode))
        type = "symlink";
    snprintf(abs, sizeof(abs), "/%s", path);
    iso_time(st->st_atim, at, sizeof(at));
    iso_time(st->st_mtim, mt, sizeof(mt));
    iso_time(st->st_ctim, ct, sizeof(ct));
    o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:s, s:s, s:s}", "name",
                  path[0] ? (slash ? slash + 1 : path) : "/", "type", type, "path", abs, "size",
                  (json_int_t)st->st_size, "mode", (json_int_t)(st->st_mode & 07777), "uid",
                  (json_int_t)st->st_uid, "gid", (json_int_t)st->st_gid, "atime", at, "mtime", mt,
                  "ctime", ct);
    if (o && target)
        json_object_set_new(o, "target", json_string(target));
    return o;
}

/* The entry of name in dir, not following it, and its mode into *mode when
 * not NULL; NULL with errno. */
static json_t *entry_at(int dir, const char *name, const char *path, mode_t *mode)
{
    struct stat st;
    char target[4096];
    ssize_t n = 0;

    if (fstatat(dir, name[0] ? name : ".", &st, AT_SYMLINK_NOFOLLOW) != 0)
        return NULL;
    if (S_ISLNK(st.st_mode) && (n = readlinkat(dir, name, target, sizeof(target) - 1)) < 0)
        return NULL;
    target[n > 0 ? n : 0] = '\0';
    if (mode)
        *mode = st.st_mode;
    return entry(path, &st, S_ISLNK(st.st_mode) ? target : NULL);
}

int vf_open_root(const char *dir)
{
    return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int vf_stat(int root, const char *path, json_t **out, char *why, size_t whylen)
{
    const char *name;
    int dir = parent_of(root, path, &name), err;

    if (dir < 0)
        return fail(errno, "path", why, whylen);
    *out = entry_at(dir, name, path, NULL);
    err = errno;
    close(dir);
    return *out ? 0 : fail(err, "path", why, whylen);
}

struct walk {
    json_t *arr;
    size_t n;
};

/* Appends the entries of open directory fd (at path) to w, depth levels. */
static int walk(int fd, const char *path, long depth, struct walk *w, char *why, size_t whylen)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;
    int rc = 0;

    if (!d) {
        close(fd);
        return fail(errno, "path", why, whylen);
    }
    while (rc == 0 && (e = readdir(d))) {
        char sub[4096]; /* a path the kernel takes */
        json_t *o;
        mode_t mode;
        int cfd;

        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (++w->n > VF_LIST_MAX) {
            snprintf(why, whylen, "over %d entries: list a directory further down, or less deep",
                     VF_LIST_MAX);
            rc = 400;
            break;
        }
        if (snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "/" : "", e->d_name) >=
            (int)sizeof(sub)) { /* a path cut short would name another file */
            snprintf(why, whylen, "a path under it is over %zu bytes: list further down",
                     sizeof(sub) - 1);
            rc = 400;
            break;
        }
        if (!(o = entry_at(dirfd(d), e->d_name, sub, &mode)))
            continue; /* gone meanwhile */
        json_array_append_new(w->arr, o);
        if (depth <= 1 || !S_ISDIR(mode))
            continue;
        cfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd >= 0)
            rc = walk(cfd, sub, depth - 1, w, why, whylen);
    }
    closedir(d);
    return rc;
}

int vf_list(int root, const char *path, long depth, json_t **out, char *why, size_t whylen)
{
    struct walk w = {.arr = json_array()};
    int p = resolve(root, path, O_PATH | O_DIRECTORY), fd, rc;

    *out = NULL;
    if (p < 0) {
        json_decref(w.arr);
        return fail(errno, "path", why, whylen);
    }
    fd = openat(p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    close(p);
    if (fd < 0) {
        json_decref(w.arr);
        return fail(errno, "path", why, whylen);
    }
    rc = walk(fd, path, depth, &w, why, whylen);
    if (rc == 0)
        *out = w.arr;
    else
        json_decref(w.arr);
    return rc;
}

/* Sets owner and mode through fd, an open descriptor. */
static int own(int fd, long uid, long gid, long mode)
{
    if ((uid >= 0 || gid >= 0) && fchown(fd, (uid_t)uid, (gid_t)gid) != 0)
        return -1;
    return mode >= 0 ? fchmod(fd, (mode_t)mode) : 0;
}

/* mkdirat(dir, name) owned as given, through the new directory's own
 * descriptor (O_NOFOLLOW: the name swapped for a symlink meanwhile is
 * refused, not followed). A directory that cannot be owned so is removed
 * again (empty, just made): a failed request leaves nothing behind. */
static int make_dir(int dir, const char *name, long uid, long gid, long mode)
{
    int fd, rc = -1, err;

    if (mkdirat(dir, name, 0700) != 0)
        return -1;
    fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        rc = own(fd, uid < 0 ? 0 : uid, gid < 0 ? 0 : gid, mode);
        err = errno;
        close(fd);
        errno = err;
    }
    if (rc != 0) {
        err = errno;
        unlinkat(dir, name, AT_REMOVEDIR); /* fails on anything but an empty directory */
        errno = err;
    }
    return rc;
}

/* Every missing directory of path, from the root down: the last with o's
 * mode, the others 0755. 0, or -1 with errno. */
static int make_parents(int root, const char *path, const struct vf_owner *o)
{
    char prefix[4096];
    size_t n = strlen(path);

    for (size_t i = 0; i <= n; i++) {
        const char *name;
        int fd, dir, rc, last = i == n;

        if (path[i] != '/' && !last)
            continue;
        memcpy(prefix, path, i);
        prefix[i] = '\0';
        fd = resolve(root, prefix, O_PATH | O_DIRECTORY);
        if (fd >= 0) {
            close(fd);
            continue;
        }
        if (errno != ENOENT || (dir = parent_of(root, prefix, &name)) < 0)
            return -1;
        rc = make_dir(dir, name, o->uid, o->gid, last && o->mode >= 0 ? o->mode : 0755);
        if (rc != 0 && errno != EEXIST) { /* EEXIST: made meanwhile */
            int err = errno;
            close(dir);
            errno = err;
            return -1;
        }
        close(dir);
    }
    return 0;
}

int vf_mkdir(int root, const char *path, const struct vf_owner *o, int parents, json_t **out,
             char *why, size_t whylen)
{
    const char *name;
    int dir, rc, err;

    *out = NULL;
    if (parents) {
        rc = make_parents(root, path, o);
    } else if (!path[0]) {
        rc = -1;
        errno = EEXIST;
    } else if ((dir = parent_of(root, path, &name)) < 0) {
        return fail(errno, "path's directory", why, whylen);
    } else {
        rc = make_dir(dir, name, o->uid, o->gid, o->mode >= 0 ? o->mode : 0755);
        err = errno;
        close(dir);
        errno = err;
    }
    if (rc != 0 && errno == ENOTDIR) {
        snprintf(why, whylen, "path: it, or a directory above it, is not a directory");
        return 409;
    }
    if (rc != 0)
        return fail(errno, "path", why, whylen);
    return vf_stat(root, path, out, why, whylen);
}

int vf_open_read(int root, const char *path, int *fd, long long *size, char *why, size_t whylen)
{
    struct stat st;
    int p = resolve(root, path, O_PATH), err;

    *fd = -1;
    if (p < 0)
        return fail(errno, "path", why, whylen);
    if (fstat(p, &st) != 0) {
        err = errno;
        close(p);
        return fail(err, "path", why, whylen);
    }
    if (!S_ISREG(st.st_mode)) {
        close(p);
        snprintf(why, whylen, "path: %s",
                 S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        return 400;
    }
    *fd = reopen(p, O_RDONLY);
    err = errno;
    close(p);
    if (*fd < 0)
        return fail(err, "path", why, whylen);
    *size = (long long)st.st_size;
    return 0;
}

int vf_upload_begin(int root, const char *path, struct vf_upload *u, char *why, size_t whylen)
{
    const char *name;
    struct stat st;

    u->dir = u->fd = -1;
    if (!path[0]) {
        snprintf(why, whylen, "path: the volume's root is a directory");
        return 409;
    }
    if ((u->dir = parent_of(root, path, &name)) < 0)
        return fail(errno, "path's directory", why, whylen);
    snprintf(u->name, sizeof(u->name), "%s", name);
    if (strlen(name) >= sizeof(u->name)) {
        vf_upload_abort(u);
        return fail(ENAMETOOLONG, "path", why, whylen);
    }
    if (fstatat(u->dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        vf_upload_abort(u);
        snprintf(why, whylen, "path: is a directory");
        return 409;
    }
    u->fd = openat(u->dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (u->fd < 0) {
        int err = errno;
        vf_upload_abort(u);
        return fail(err, "path", why, whylen);
    }
    return 0;
}

void vf_upload_abort(struct vf_upload *u)
{
    if (u->fd >= 0)
        close(u->fd); /* unnamed: nothing is left */
    if (u->dir >= 0)
        close(u->dir);
    u->fd = u->dir = -1;
}

/* The complete file gets a temporary name beside the target, then the
 * target's (rename replaces a file or symlink of that name, never follows
 * it; a directory refuses). */
int vf_upload_commit(struct vf_upload *u, const char *path, const struct vf_owner *o, json_t **out,
                     char *why, size_t whylen)
{
    char tmp[64], hex[17], proc[40];
    int rc = 0, ok;

    *out = NULL;
    proc_fd(u->fd, proc);
    if (secret_random_hex(hex, 8) != 0)
        snprintf(hex, sizeof(hex), "%d", getpid());
    snprintf(tmp, sizeof(tmp), ".corral-upload-%s", hex);
    ok = own(u->fd, o->uid < 0 ? 0 : o->uid, o->gid < 0 ? 0 : o->gid,
             o->mode >= 0 ? o->mode : 0644) == 0 &&
         fdatasync(u->fd) == 0 && linkat(AT_FDCWD, proc, u->dir, tmp, AT_SYMLINK_FOLLOW) == 0;

    if (ok && renameat(u->dir, tmp, u->dir, u->name) != 0) {
        int err = errno;
        unlinkat(u->dir, tmp, 0);
        errno = err;
        ok = 0;
    }
    if (ok)
        ok = (*out = entry_at(u->dir, u->name, path, NULL)) != NULL;
    if (!ok)
        rc = fail(errno, "path", why, whylen);
    vf_upload_abort(u);
    return rc;
}

/* Empties open directory fd, never following a symlink. */
static int empty_dir(int fd, int level)
{
    DIR *d;
    struct dirent *e;
    int rc = 0;

    if (level > REMOVE_DEPTH_MAX) {
        close(fd);
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!(d = fdopendir(fd))) {
        close(fd);
        return -1;
    }
    while (rc == 0 && (e = readdir(d))) {
        struct stat st;
        int sub;

        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* gone meanwhile */
        if (S_ISDIR(st.st_mode)) {
            sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            rc = sub < 0 || empty_dir(sub, level + 1) != 0 ||
                         unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0
                     ? -1
                     : 0;
        } else if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT) {
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

int vf_remove(int root, const char *path, char *why, size_t whylen)
{
    const char *name;
    struct stat st;
    int dir, sub, rc, ok;

    if (!path[0]) {
        snprintf(why, whylen, "path: the volume's root cannot be removed (remove what it holds)");
        return 400;
    }
    if ((dir = parent_of(root, path, &name)) < 0)
        return fail(errno, "path", why, whylen);
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        ok = 0;
    } else if (S_ISDIR(st.st_mode)) {
        sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        ok = sub >= 0 && empty_dir(sub, 0) == 0 && unlinkat(dir, name, AT_REMOVEDIR) == 0;
    } else {
        ok = unlinkat(dir, name, 0) == 0;
    }
    rc = ok ? 0 : fail(errno, "path", why, whylen);
    close(dir);
    return rc;
}

/* o's owner and mode on fd, an O_PATH descriptor of what st describes. 0,
 * or an HTTP status with why. */
static int apply_meta(int fd, const struct stat *st, const struct vf_owner *o, char *why,
                      size_t whylen)
{
    char proc[40];

    if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode)) {
        snprintf(why, whylen, "path: not a regular file, directory or symlink");
        return 400;
    }
    if (S_ISLNK(st->st_mode) && o->mode >= 0) {
        snprintf(why, whylen, "mode: a symlink has none of its own");
        return 400;
    }
    if ((o->uid >= 0 || o->gid >= 0) &&
        fchownat(fd, "", (uid_t)o->uid, (gid_t)o->gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
        return fail(errno, "path", why, whylen);
    /* chmod follows the descriptor's magic link to its own inode: a regular
     * file or directory (checked), not reopened, no name looked up */
    proc_fd(fd, proc);
    if (o->mode >= 0 && chmod(proc, (mode_t)o->mode) != 0)
        return fail(errno, "path", why, whylen);
    return 0;
}

int vf_set_meta(int root, const char *path, const struct vf_owner *o, json_t **out, char *why,
                size_t whylen)
{
    const char *name;
    struct stat st;
    int dir, fd, rc;

    *out = NULL;
    if ((dir = parent_of(root, path, &name)) < 0)
        return fail(errno, "path", why, whylen);
    fd = path[0] ? openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC) : dup(root);
    if (fd < 0 || fstat(fd, &st) != 0)
        rc = fail(errno, "path", why, whylen);
    else
        rc = apply_meta(fd, &st, o, why, whylen);
    if (rc == 0 && !(*out = entry_at(dir, path[0] ? name : "", path, NULL)))
        rc = fail(errno, "path", why, whylen);
    if (fd >= 0)
        close(fd);
    close(dir);
    return rc;
}
