/*
 * inotify watches one directory per watch descriptor, so a recursive watch
 * adds every directory below the root and, as directories appear, their
 * watches too. Event names are relative to the watched root, as E2B reports
 * them ("sub/file.txt"). The kernel queues events between reads, which is what
 * lets the non-streaming watcher API collect them lazily, without a thread.
 */
#include "watch.h"
#include "connect_rpc.h"
#include "entry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define WATCH_MASK                                                                                 \
    (IN_CREATE | IN_MODIFY | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_ONLYDIR)

static int remember(struct watcher *w, int wd, const char *path)
{
    for (int i = 0; i < w->ndirs; i++) {
        if (w->dirs[i].wd == wd) {
            char *p = strdup(path); /* same inode seen again (moved): keep the new path */
            if (p == NULL)
                return -1;
            free(w->dirs[i].path); /* NOLINT(clang-analyzer-unix.Malloc): one owner per slot */
            w->dirs[i].path = p;
            return 0;
        }
    }
    if (w->ndirs == w->cap) {
        int ncap = w->cap ? w->cap * 2 : 16;
        struct watch_dir *nd = realloc(w->dirs, (size_t)ncap * sizeof(*nd));
        if (nd == NULL)
            return -1;
        w->dirs = nd;
        w->cap = ncap;
    }
    w->dirs[w->ndirs].wd = wd;
    w->dirs[w->ndirs].path = strdup(path);
    if (w->dirs[w->ndirs].path == NULL)
        return -1;
    w->ndirs++;
    return 0;
}

static void forget(struct watcher *w, int wd)
{
    for (int i = 0; i < w->ndirs; i++) {
        if (w->dirs[i].wd == wd) {
            free(w->dirs[i].path); /* NOLINT(clang-analyzer-unix.Malloc): one owner per slot */
            w->dirs[i] = w->dirs[--w->ndirs];
            return;
        }
    }
}

static const char *dir_of(struct watcher *w, int wd)
{
    for (int i = 0; i < w->ndirs; i++)
        if (w->dirs[i].wd == wd)
            return w->dirs[i].path; /* NOLINT(clang-analyzer-unix.Malloc) */
    return NULL;
}

/* Adds a watch on dir and, when recursive, on every directory below it. */
static int add_tree(struct watcher *w, const char *dir, int depth)
{
    int wd = inotify_add_watch(w->ifd, dir, WATCH_MASK);
    DIR *d;
    struct dirent *de;
    char child[PATH_MAX];

    if (wd < 0)
        return -1;
    if (remember(w, wd, dir) < 0)
        return -1;
    if (!w->recursive || depth > 64)
        return 0;
    d = opendir(dir);
    if (d == NULL)
        return 0; /* unreadable subtree: watch what we can */
    while ((de = readdir(d)) != NULL) {
        if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (snprintf(child, sizeof(child), "%s/%s", strcmp(dir, "/") ? dir : "", de->d_name) >=
            (int)sizeof(child))
            continue;
        if (add_tree(w, child, depth + 1) < 0 && errno != EACCES && errno != ENOENT) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    return 0;
}

int watcher_open(struct watcher *w, const char *root, int recursive, int include_entry)
{
    memset(w, 0, sizeof(*w));
    snprintf(w->root, sizeof(w->root), "%s", root);
    w->recursive = recursive;
    w->include_entry = include_entry;
    w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->ifd < 0)
        return -1;
    if (add_tree(w, root, 0) < 0) {
        int saved = errno;
        watcher_close(w);
        errno = saved;
        return -1;
    }
    return 0;
}

void watcher_close(struct watcher *w)
{
    if (w->ifd >= 0)
        close(w->ifd);
    w->ifd = -1;
    for (int i = 0; i < w->ndirs; i++)
        free(w->dirs[i].path);
    free(w->dirs);
    w->dirs = NULL;
    w->ndirs = w->cap = 0;
}

static void append_event(struct watcher *w, json_t *events, const char *full, const char *type,
                         int exists)
{
    size_t rlen = strlen(w->root);
    const char *rel = full;
    json_t *ev = json_object();

    if (strncmp(full, w->root, rlen) == 0) {
        rel = full + rlen;
        while (*rel == '/')
            rel++;
    }
    json_object_set_new(ev, "name", json_str_lossy(rel));
    json_object_set_new(ev, "type", json_string(type));
    if (w->include_entry && exists) {
        json_t *e = entry_info(full);
        if (e != NULL)
            json_object_set_new(ev, "entry", e);
    }
    json_array_append_new(events, ev);
}

static int translate(struct watcher *w, const struct inotify_event *ie, json_t *events)
{
    const char *dir = dir_of(w, ie->wd);
    char full[PATH_MAX];
    int n = 0;

    if (ie->mask & IN_IGNORED) {
        forget(w, ie->wd);
        return 0;
    }
    if (dir == NULL || ie->len == 0)
        return 0; /* events about a watched directory itself come from its parent */
    snprintf(full, sizeof(full), "%s/%s", strcmp(dir, "/") ? dir : "", ie->name);
    if (ie->mask & (IN_CREATE | IN_MOVED_TO)) {
        append_event(w, events, full, "EVENT_TYPE_CREATE", 1), n++;
        if (w->recursive && (ie->mask & IN_ISDIR))
            add_tree(w, full, 0);
    }
    if (ie->mask & IN_MOVED_FROM)
        append_event(w, events, full, "EVENT_TYPE_RENAME", 0), n++;
    if (ie->mask & IN_ATTRIB)
        append_event(w, events, full, "EVENT_TYPE_CHMOD", 1), n++;
    if (ie->mask & IN_MODIFY)
        append_event(w, events, full, "EVENT_TYPE_WRITE", 1), n++;
    if (ie->mask & IN_DELETE)
        append_event(w, events, full, "EVENT_TYPE_REMOVE", 0), n++;
    return n;
}

int watcher_collect(struct watcher *w, json_t *events)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    int count = 0;

    for (;;) {
        ssize_t len = read(w->ifd, buf, sizeof(buf));
        if (len < 0 && errno == EINTR)
            continue;
        if (len < 0 && errno == EAGAIN)
            return count;
        if (len <= 0)
            return -1;
        for (char *p = buf; p < buf + len;) {
            const struct inotify_event *ie = (const struct inotify_event *)p;
            count += translate(w, ie, events);
            p += sizeof(*ie) + ie->len;
        }
    }
}

int watch_is_network_mount(const char *path)
{
    struct statfs sf;

    if (statfs(path, &sf) < 0)
        return 0;
    switch ((unsigned long)sf.f_type) {
    case 0x6969UL:     /* NFS */
    case 0xFF534D42UL: /* CIFS */
    case 0x517BUL:     /* SMB */
    case 0xFE534D42UL: /* SMB2 */
    case 0x65735546UL: /* FUSE */
        return 1;
    default:
        return 0;
    }
}
