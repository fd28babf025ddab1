/*
 * realpath() resolves symlinks, "..", "." and repeated slashes the way the
 * kernel does and, since it returns the path as seen in this mount namespace,
 * a bind mount is decided by where it appears, the same place the operation
 * will reach. Only the part of a path that does not exist yet is handled
 * lexically: nothing there can be a symlink (yet).
 */
#include "gate_canon.h"
#include "paths.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gate_canon(const char *abs, char *out, size_t outsz)
{
    char prefix[PATH_MAX], real[PATH_MAX];
    size_t cut;

    if (abs[0] != '/' || strlen(abs) >= sizeof(prefix)) {
        errno = abs[0] != '/' ? EINVAL : ENAMETOOLONG;
        return -1;
    }
    memcpy(prefix, abs, strlen(abs) + 1);
    cut = strlen(prefix);
    /* Walk back one component at a time until a prefix exists ("/" always does). */
    while (realpath(prefix, real) == NULL) {
        char *slash = strrchr(prefix, '/');
        if (slash == prefix) {
            snprintf(real, sizeof(real), "/");
            cut = 1;
            break;
        }
        *slash = '\0';
        cut = (size_t)(slash - prefix);
    }
    /* what does not exist yet follows the real prefix, "." and ".." lexically */
    if (snprintf(out, outsz, "%s/%s", real, abs + cut) >= (int)outsz) {
        errno = ENAMETOOLONG;
        return -1;
    }
    path_clean_abs(out);
    return 0;
}

int gate_canon_at(const char *cwd, const char *arg, char *out, size_t outsz)
{
    char joined[PATH_MAX];

    if (arg[0] == '/')
        return gate_canon(arg, out, outsz);
    if (snprintf(joined, sizeof(joined), "%s/%s", cwd, arg) >= (int)sizeof(joined)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return gate_canon(joined, out, outsz);
}

/* nftw has no user argument: the search is the thread's own. */
#define ALIAS_WALK_MAX 20000
static __thread struct {
    dev_t dev;
    ino_t ino;
    int seen;
    char *out;
    size_t outsz;
} walk;

static int same_inode(const char *fpath, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (++walk.seen > ALIAS_WALK_MAX)
        return -1;
    if (flag != FTW_F || !S_ISREG(st->st_mode) || st->st_dev != walk.dev || st->st_ino != walk.ino)
        return 0;
    snprintf(walk.out, walk.outsz, "%s", fpath);
    return 1;
}

int gate_hardlink_alias(const char *path, const struct gate_list *roots, char *out, size_t outsz)
{
    struct stat st;

    if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2)
        return 0;
    for (size_t i = 0; i < roots->n; i++) {
        walk.dev = st.st_dev;
        walk.ino = st.st_ino;
        walk.seen = 0;
        walk.out = out;
        walk.outsz = outsz;
        /* Hard links never cross a file system: FTW_MOUNT stays on the root's. */
        if (nftw(roots->v[i], same_inode, 16, FTW_PHYS | FTW_MOUNT) == 1)
            return 1;
    }
    return 0;
}
