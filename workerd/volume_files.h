/* volume_files.h: a volume's files, every path resolved inside the volume's
 * directory (decision 0071).
 *
 * A sandbox that mounts the volume can leave anything in it: symlinks to
 * "/etc", "../../..", FIFOs. workerd works on this host as root, so no name
 * is ever resolved the ordinary way:
 * - a path is resolved with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
 *   RESOLVE_NO_XDEV) from the volume's directory: "..", absolute and
 *   relative symlinks all stay inside it, as if it were "/";
 * - a final name that must not be followed is acted on with *at() and
 *   AT_SYMLINK_NOFOLLOW / O_NOFOLLOW from its parent's descriptor;
 * - a file's content is opened only once its type is known to be regular
 *   (O_PATH first, fstat, then reopened through /proc/self/fd): a device
 *   node or FIFO is never opened (opening one can block or act);
 * - a new file or directory is owned and moded through its own descriptor,
 *   never by name (a name can be swapped for a symlink in between);
 * - an upload is written to an unnamed file (O_TMPFILE) and renamed over the
 *   target only when complete: no reader sees half of it, a failed one
 *   leaves the old file.
 *
 * Paths are volume_req's normalised ones ("" the root, "a/b"). Each function
 * answers 0, or an HTTP status with why: 400 (not a file, not a directory,
 * the root where it cannot be), 404 (not there), 409 (exists, is a
 * directory, not empty), 507 (no space), 500. tests/workerd/unit_volume.c
 * runs them on a real directory. */
#ifndef WORKERD_VOLUME_FILES_H
#define WORKERD_VOLUME_FILES_H

#include <jansson.h>
#include <stddef.h>

#define VF_LIST_MAX 10000 /* entries in one listing */

struct vf_owner {
    long uid, gid, mode; /* -1: not given */
};

/* The volume's directory, to pass as root below; -1 with errno. */
int vf_open_root(const char *dir);

/* VolumeEntryStat of path, a final symlink as itself. */
int vf_stat(int root, const char *path, json_t **out, char *why, size_t whylen);

/* The entries of directory path (a final symlink followed, inside the
 * volume), depth levels deep (1: its own); symlinked directories are listed,
 * not entered. At most VF_LIST_MAX. */
int vf_list(int root, const char *path, long depth, json_t **out, char *why, size_t whylen);

/* Makes directory path with o's owner (default root) and mode (default
 * 0755); parents: also the missing directories above it (0755, o's owner),
 * and an existing directory is no fault. Its entry. */
int vf_mkdir(int root, const char *path, const struct vf_owner *o, int parents, json_t **out,
             char *why, size_t whylen);

/* Regular file path (a final symlink followed, inside the volume) opened for
 * reading: *fd and its *size. */
int vf_open_read(int root, const char *path, int *fd, long long *size, char *why, size_t whylen);

/* An upload to path: begin (its directory must exist; path must not be a
 * directory), write u->fd, then commit (o's owner, default root, and mode,
 * default 0644; the entry) or abort. */
struct vf_upload {
    int dir, fd;
    char name[256];
};
int vf_upload_begin(int root, const char *path, struct vf_upload *u, char *why, size_t whylen);
int vf_upload_commit(struct vf_upload *u, const char *path, const struct vf_owner *o, json_t **out,
                     char *why, size_t whylen);
void vf_upload_abort(struct vf_upload *u);

/* Removes path; a directory with everything in it (symlinks removed, never
 * followed). The root cannot be removed. */
int vf_remove(int root, const char *path, char *why, size_t whylen);

/* Sets what o gives of path's owner and mode (a symlink's owner only). Its
 * entry after. */
int vf_set_meta(int root, const char *path, const struct vf_owner *o, json_t **out, char *why,
                size_t whylen);

#endif
