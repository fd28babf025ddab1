#include "stopped.h"

#include "containers.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    pthread_mutex_t mu;
    char dir[512];
    char (*ids)[CTR_ID_MAX];
    int n, cap;
} set = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Index of sbid in the set, or -1. Under set.mu. */
static int find(const char *sbid)
{
    for (int i = 0; i < set.n; i++)
        if (strcmp(set.ids[i], sbid) == 0)
            return i;
    return -1;
}

/* Adds sbid unless present. 0, or -1 out of memory. Under set.mu. */
static int add(const char *sbid)
{
    if (find(sbid) >= 0)
        return 0;
    if (set.n == set.cap) {
        int cap = set.cap ? set.cap * 2 : 16;
        void *v = realloc(set.ids, (size_t)cap * sizeof(*set.ids));
        if (!v)
            return -1;
        set.ids = v;
        set.cap = cap;
    }
    snprintf(set.ids[set.n++], CTR_ID_MAX, "%s", sbid);
    return 0;
}

int stopped_load(const char *state_dir, char *err, size_t errlen)
{
    DIR *d;
    struct dirent *e;

    snprintf(set.dir, sizeof(set.dir), "%s/stopped", state_dir);
    if (mkdir(set.dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", set.dir, strerror(errno));
        return -1;
    }
    if (!(d = opendir(set.dir))) {
        snprintf(err, errlen, "%s: %s", set.dir, strerror(errno));
        return -1;
    }
    pthread_mutex_lock(&set.mu);
    while ((e = readdir(d)))
        if (containers_id_ok(e->d_name) && add(e->d_name) != 0)
            break;
    pthread_mutex_unlock(&set.mu);
    closedir(d);
    return 0;
}

/* The file's creation is durable only once its directory is synced. */
static int sync_dir(void)
{
    int fd = open(set.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

    if (fd < 0)
        return -1;
    rc = fsync(fd);
    close(fd);
    return rc;
}

int stopped_mark(const char *sbid, char *err, size_t errlen)
{
    char path[600];
    int fd, rc;

    if (!set.dir[0] || !containers_id_ok(sbid)) {
        snprintf(err, errlen, "cannot mark %s stopped: no state directory", sbid);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/%s", set.dir, sbid);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || close(fd) != 0 || sync_dir() != 0) {
        snprintf(err, errlen, "marking %s stopped: %s", path, strerror(errno));
        return -1;
    }
    pthread_mutex_lock(&set.mu);
    rc = add(sbid);
    pthread_mutex_unlock(&set.mu);
    if (rc != 0)
        snprintf(err, errlen, "marking %s stopped: out of memory", sbid);
    return rc;
}

void stopped_clear(const char *sbid)
{
    char path[600];
    int i;

    if (!set.dir[0] || !containers_id_ok(sbid))
        return;
    pthread_mutex_lock(&set.mu);
    if ((i = find(sbid)) >= 0) {
        memcpy(set.ids[i], set.ids[set.n - 1], CTR_ID_MAX);
        set.n--;
        snprintf(path, sizeof(path), "%s/%s", set.dir, sbid);
        if (unlink(path) != 0 && errno != ENOENT)
            log_warn("%s: %s", path, strerror(errno));
    }
    pthread_mutex_unlock(&set.mu);
}

int stopped_has(const char *sbid)
{
    int has;

    pthread_mutex_lock(&set.mu);
    has = sbid && find(sbid) >= 0;
    pthread_mutex_unlock(&set.mu);
    return has;
}

void stopped_prune(struct docker *d, const char *wid)
{
    char(*ids)[CTR_ID_MAX];
    int n;

    pthread_mutex_lock(&set.mu);
    n = set.n;
    ids = n ? malloc((size_t)n * sizeof(*ids)) : NULL;
    if (ids)
        memcpy(ids, set.ids, (size_t)n * sizeof(*ids));
    pthread_mutex_unlock(&set.mu);
    for (int i = 0; ids && i < n; i++) {
        int rc = containers_running(d, wid, ids[i]);
        if (rc == 0)
            continue; /* stopped, as marked: a paused sandbox */
        if (rc < 0)
            break; /* dockerd: the marks stay as they are */
        log_sandbox("info", ids[i], NULL, "no longer stopped (%s): mark dropped",
                    rc == 1 ? "running" : "gone");
        stopped_clear(ids[i]);
    }
    free(ids);
}
