/*
 * Users and groups, read from the passwd and group files directly: envd is a
 * static binary, and glibc's NSS cannot be relied on from one, so there is no
 * getpwnam here. The files are cached and re-read when they change.
 */
#ifndef ENVD_USERS_H
#define ENVD_USERS_H

#include <limits.h>
#include <sys/types.h>

#define USERS_MAX_GROUPS 64

struct envd_user {
    char name[64];
    uid_t uid;
    gid_t gid;
    char home[PATH_MAX];
    gid_t groups[USERS_MAX_GROUPS]; /* primary group first, then supplementary */
    int ngroups;
};

/* 0 when found, -1 when there is no such user. */
int users_lookup(const char *name, struct envd_user *out);

/* The user an RPC runs as: Basic auth "<name>:" when sent, else the default user.
 * 0 ok; -1 with msg filled when the named user does not exist. */
int users_from_authorization(const char *authorization, struct envd_user *out, char *msg,
                             size_t msgsz);

/* The default user (envd_cfg.default_user, or root when it does not exist). */
int users_default(struct envd_user *out);

/* Names for EntryInfo.owner/group; the number when there is no name. */
void users_uid_name(uid_t uid, char *out, size_t outsz);
void users_gid_name(gid_t gid, char *out, size_t outsz);

/* Runs the calling thread's filesystem accesses as u (fsuid/fsgid and groups are
 * per-thread on Linux), so permission checks and ownership of created files are the
 * user's. creds_leave returns the thread to root. */
int creds_enter(const struct envd_user *u);
void creds_leave(void);

#endif
