#include "state_file.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int state_dir_prepare(const char *dir, char *err, size_t errlen)
{
    struct stat st;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "state_dir %s: %s", dir, strerror(errno));
        return -1;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "state_dir %s: not a directory", dir);
        return -1;
    }
    return 0;
}

static int identity_set(void *ud, const char *key, const char *value, char *err, size_t errlen)
{
    struct worker_identity *id = ud;
    char *dst = strcmp(key, "worker_id") == 0       ? id->worker_id
                : strcmp(key, "worker_secret") == 0 ? id->worker_secret
                                                    : NULL;
    size_t len = dst == id->worker_id ? sizeof(id->worker_id) : sizeof(id->worker_secret);

    if (!dst) {
        snprintf(err, errlen, "unknown key");
        return -1;
    }
    if (strlen(value) >= len) {
        snprintf(err, errlen, "too long");
        return -1;
    }
    snprintf(dst, len, "%s", value);
    return 0;
}

int state_load(const char *dir, struct worker_identity *id, char *err, size_t errlen)
{
    char path[512];

    memset(id, 0, sizeof(*id));
    snprintf(path, sizeof(path), "%s/worker", dir);
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return 0;
    if (config_load(path, identity_set, id, err, errlen) != 0)
        return -1;
    if (!id->worker_id[0] || !id->worker_secret[0]) {
        snprintf(err, errlen, "%s: worker_id or worker_secret missing", path);
        return -1;
    }
    return 1;
}

static int write_all(int fd, const char *s)
{
    size_t n = strlen(s);

    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

int state_save(const char *dir, const struct worker_identity *id, char *err, size_t errlen)
{
    char path[512], tmp[520], text[STATE_ID_MAX + STATE_SECRET_MAX + 64];
    int fd;

    snprintf(path, sizeof(path), "%s/worker", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    snprintf(text, sizeof(text), "worker_id = %s\nworker_secret = %s\n", id->worker_id,
             id->worker_secret);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    if (fchmod(fd, 0600) != 0 || write_all(fd, text) != 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
