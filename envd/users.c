/*
 * Why not getpwnam: a static glibc binary would need the NSS shared objects of
 * its own glibc version at run time. The sandbox image keeps users in
 * /etc/passwd and /etc/group, so reading those is both simpler and reliable.
 */
#include "users.h"
#include "basic_auth_parse.h"
#include "envd.h"
#include "users_parse.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct db_file {
    const char *path;
    char *text;
    struct timespec mtime;
    off_t size;
};

static pthread_mutex_t users_mu = PTHREAD_MUTEX_INITIALIZER;
static struct db_file passwd_db, group_db;

/* Re-reads a database file when its mtime or size changed. Caller holds users_mu. */
static int db_refresh(struct db_file *db, const char *path)
{
    struct stat st;
    FILE *f;
    char *text;

    if (stat(path, &st) < 0)
        return -1;
    if (db->text != NULL && db->size == st.st_size && db->mtime.tv_sec == st.st_mtim.tv_sec &&
        db->mtime.tv_nsec == st.st_mtim.tv_nsec)
        return 0;
    f = fopen(path, "re");
    if (f == NULL)
        return -1;
    text = calloc(1, (size_t)st.st_size + 1);
    if (text == NULL || fread(text, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        free(text);
        fclose(f);
        return -1;
    }
    fclose(f);
    free(db->text);
    db->text = text;
    db->size = st.st_size;
    db->mtime = st.st_mtim;
    return 0;
}

/* -agent: whoever started envd, whatever name the SDK sent ("user", "root"):
 * on a person's machine there is one identity to act as, and no other. */
static int users_self(const char *name, struct envd_user *out)
{
    const char *home = getenv("HOME");
    gid_t sup[USERS_MAX_GROUPS - 1];
    int n = getgroups(USERS_MAX_GROUPS - 1, sup);

    out->uid = getuid();
    out->gid = getgid();
    users_uid_name(out->uid, out->name, sizeof(out->name));
    if (out->name[0] == '\0')
        snprintf(out->name, sizeof(out->name), "%s", name);
    snprintf(out->home, sizeof(out->home), "%s", home && home[0] == '/' ? home : "/");
    out->groups[0] = out->gid;
    out->ngroups = 1;
    for (int i = 0; i < n; i++)
        if (sup[i] != out->gid)
            out->groups[out->ngroups++] = sup[i];
    return 0;
}

int users_lookup(const char *name, struct envd_user *out)
{
    int found;

    memset(out, 0, sizeof(*out));
    if (envd_cfg.agent && name[0] != '\0')
        return users_self(name, out);
    if (strlen(name) >= sizeof(out->name) || name[0] == '\0')
        return -1;
    snprintf(out->name, sizeof(out->name), "%s", name);
    pthread_mutex_lock(&users_mu);
    found = db_refresh(&passwd_db, envd_cfg.passwd_path) == 0 &&
            users_parse_passwd(passwd_db.text, out);
    if (found) {
        out->groups[0] = out->gid;
        out->ngroups = 1;
        if (db_refresh(&group_db, envd_cfg.group_path) == 0)
            users_parse_groups(group_db.text, out);
    }
    pthread_mutex_unlock(&users_mu);
    if (!found && strcmp(name, "root") == 0) {
        /* root exists even where /etc/passwd does not say so */
        snprintf(out->home, sizeof(out->home), "/root");
        out->ngroups = 1;
        return 0;
    }
    return found ? 0 : -1;
}

int users_default(struct envd_user *out)
{
    if (users_lookup(envd_cfg.default_user, out) == 0)
        return 0;
    return users_lookup("root", out);
}

int users_from_authorization(const char *authorization, struct envd_user *out, char *msg,
                             size_t msgsz)
{
    char name[256];
    int named = basic_auth_user(authorization, name, sizeof(name));

    if (named < 0) {
        snprintf(msg, msgsz, "invalid Authorization header");
        return -1;
    }
    if (named == 0)
        return users_default(out);
    if (users_lookup(name, out) < 0) {
        snprintf(msg, msgsz, "invalid username: '%s'", name);
        return -1;
    }
    return 0;
}

static void id_name(struct db_file *db, const char *path, int field, unsigned long id, char *out,
                    size_t outsz)
{
    int found;

    pthread_mutex_lock(&users_mu);
    found = db_refresh(db, path) == 0 && users_parse_id_name(db->text, field, id, out, outsz);
    pthread_mutex_unlock(&users_mu);
    if (!found)
        snprintf(out, outsz, "%lu", id);
}

void users_uid_name(uid_t uid, char *out, size_t outsz)
{
    id_name(&passwd_db, envd_cfg.passwd_path, 2, uid, out, outsz);
}

void users_gid_name(gid_t gid, char *out, size_t outsz)
{
    id_name(&group_db, envd_cfg.group_path, 2, gid, out, outsz);
}

/*
 * Raw syscalls on purpose: glibc's setgroups() changes every thread of the
 * process, the kernel call only the calling one, which is what a per-request
 * identity needs. setfsuid() away from 0 also clears the thread's
 * CAP_DAC_OVERRIDE and friends, and setting it back to 0 restores them.
 */
int creds_enter(const struct envd_user *u)
{
    if (u->uid == 0 || envd_cfg.agent) /* -agent: the thread already is the user */
        return 0;
    if (syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) < 0)
        return -1;
    syscall(SYS_setfsgid, u->gid);
    syscall(SYS_setfsuid, u->uid);
    if ((uid_t)syscall(SYS_setfsuid, -1) != u->uid) {
        creds_leave();
        errno = EPERM;
        return -1;
    }
    return 0;
}

void creds_leave(void)
{
    gid_t root_group = 0;

    if (envd_cfg.agent)
        return;
    syscall(SYS_setfsuid, 0);
    syscall(SYS_setfsgid, 0);
    syscall(SYS_setgroups, (size_t)1, &root_group);
}
