/* Missing parent directories of an upload, created as root and handed to the
 * user (E2B's envd does the same; decision 0039). */
#ifndef ENVD_DIRS_FOR_USER_H
#define ENVD_DIRS_FOR_USER_H

#include <stddef.h>

#include "users.h"

/*
 * mkdir -p of the absolute, cleaned path dir with root's rights (the calling
 * thread must have left the user's identity: creds_leave), chowning each
 * directory it creates, and only those, to u. Walks from "/" by file
 * descriptor and never follows a symbolic link: a symlink anywhere on the way
 * is refused (EPERM), so a link the user planted cannot steer root into a
 * directory the user may not write. -1 with errno and msg filled.
 */
int dirs_create_for_user(const char *dir, const struct envd_user *u, char *msg, size_t msgsz);

#endif
