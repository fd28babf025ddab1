/* dirs_for_user.c: root creates an upload's missing parents for the user. */
#include "dirs_for_user.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens the directory name under dirfd without following a symlink; when name
 * is missing, creates it first and chowns it to u. -1 with msg filled. */
static int step(int dirfd, const char *name, const char *sofar, const struct envd_user *u,
                char *msg, size_t msgsz)
{
    const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(dirfd, name, flags);
    struct stat st;

    if (fd >= 0)
        return fd;
    if (errno == ENOENT) {
        int created = mkdirat(dirfd, name, 0755) == 0;
        if (!created && errno != EEXIST) {
            snprintf(msg, msgsz, "failed to create directory '%s': %s", sofar, strerror(errno));
            return -1;
        }
        /* O_NOFOLLOW again: the user may race us only inside its own directories.
         * Only a directory this call made changes owner, never one that was there. */
        fd = openat(dirfd, name, flags);
        if (fd >= 0 && created && fchown(fd, u->uid, u->gid) < 0) {
            snprintf(msg, msgsz, "failed to chown directory '%s': %s", sofar, strerror(errno));
            close(fd);
            return -1;
        }
        if (fd >= 0)
            return fd;
    }
    int err = errno;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        errno = err;
        snprintf(msg, msgsz, "failed to open directory '%s': %s", sofar, strerror(err));
    } else if (S_ISLNK(st.st_mode)) {
        errno = EPERM;
        snprintf(msg, msgsz,
                 "'%s' is a symbolic link: envd creates directories the user may not create "
                 "only along a path without one",
                 sofar);
    } else {
        errno = ENOTDIR;
        snprintf(msg, msgsz, "path is a file: %s", sofar);
    }
    return -1;
}

int dirs_create_for_user(const char *dir, const struct envd_user *u, char *msg, size_t msgsz)
{
    char buf[4096];
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0 || snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf) || buf[0] != '/') {
        if (fd >= 0)
            close(fd);
        errno = ENAMETOOLONG;
        snprintf(msg, msgsz, "path too long");
        return -1;
    }
    for (char *name = buf + 1, *end; *name != '\0'; name = end) {
        int next;

        end = strchrnul(name, '/');
        char saved = *end;
        *end = '\0';
        next = step(fd, name, buf, u, msg, msgsz);
        close(fd);
        if (next < 0)
            return -1;
        fd = next;
        *end = saved;
        if (saved == '/')
            end++;
    }
    close(fd);
    return 0;
}
