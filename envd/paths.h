/* Path rules shared by the RPC services and /files: how a client path becomes an absolute one. */
#ifndef ENVD_PATHS_H
#define ENVD_PATHS_H

#include <stddef.h>

#include "users.h"

/*
 * "~" and "~/x" are the user's home, a relative path is relative to the home,
 * "" is the home itself; the result is absolute and lexically cleaned ("..",
 * ".", "//"). -1 with msg filled for paths that cannot be resolved ("~other").
 */
int path_resolve(const char *in, const struct envd_user *u, char *out, size_t outsz, char *msg,
                 size_t msgsz);

/* mkdir -p as the calling thread's identity. -1 with errno (ENOTDIR: a component is a file)
 * and msg filled. */
int path_ensure_dirs(const char *dir, char *msg, size_t msgsz);

/* Pointer to the last component of an absolute, cleaned path ("/" for "/"). */
const char *path_base(const char *path);

/* Removes ".", "..", and repeated slashes from an absolute path, in place,
 * lexically (no symlink is looked at): "/a/./b/../c//" becomes "/a/c". */
void path_clean_abs(char *p);

#endif
