/* Directory watching on inotify, recursive on request; feeds WatchDir and the watcher RPCs. */
#ifndef ENVD_WATCH_H
#define ENVD_WATCH_H

#include <jansson.h>
#include <limits.h>

struct watch_dir {
    int wd;
    char *path;
};

struct watcher {
    int ifd;
    int recursive;
    int include_entry;
    char root[PATH_MAX];
    struct watch_dir *dirs;
    int ndirs;
    int cap;
};

/* Starts watching root (an existing directory). -1 with errno set. */
int watcher_open(struct watcher *w, const char *root, int recursive, int include_entry);

/* Reads what inotify has queued (never blocks) and appends FilesystemEvent objects to
 * events. Returns the number appended, -1 on error. */
int watcher_collect(struct watcher *w, json_t *events);

void watcher_close(struct watcher *w);

/* True when path lives on NFS, CIFS/SMB or FUSE, where inotify misses remote changes. */
int watch_is_network_mount(const char *path);

#endif
