/*
 * Filesystem RPCs. Every handler runs its file system calls with the caller's
 * identity (creds_enter), so the kernel decides what the user may touch and
 * new files and directories belong to that user. Error codes follow what the
 * SDK maps: not_found for a missing path, already_exists from MakeDir,
 * invalid_argument for a path of the wrong kind, permission_denied from EACCES.
 */
#include "filesystem_service.h"
#include "entry.h"
#include "envd.h"
#include "gate.h"
#include "paths.h"
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define LIST_MAX_ENTRIES 200000

/* Resolves the "path"-like field key of in, as the caller, into out. */
static int resolve_field(struct rpc_call *call, json_t *in, const char *key, char *out, size_t n)
{
    const char *p = json_get_str(in, key);
    char msg[512];

    if (path_resolve(p ? p : "", &call->user, out, n, msg, sizeof(msg)) < 0) {
        rpc_fail(&call->err, "invalid_argument", "%s", msg);
        return -1;
    }
    return 0;
}

/* The permission gate's say on op: a denial is permission_denied and nothing happens. */
static int gated(struct rpc_call *call, enum gate_op op, const char *path, int subtree)
{
    char msg[1024];

    if (gate_file(op, path, subtree, msg, sizeof(msg)) == 0)
        return 0;
    rpc_fail(&call->err, "permission_denied", "%s", msg);
    return -1;
}

static int enter(struct rpc_call *call)
{
    if (creds_enter(&call->user) < 0) {
        rpc_fail(&call->err, "internal", "cannot switch to user '%s': %s", call->user.name,
                 strerror(errno));
        return -1;
    }
    return 0;
}

static json_t *wrap_entry(json_t *entry)
{
    json_t *out = json_object();

    json_object_set_new(out, "entry", entry);
    return out;
}

json_t *fs_stat(struct rpc_call *call, json_t *in)
{
    char path[PATH_MAX];
    json_t *e;

    if (resolve_field(call, in, "path", path, sizeof(path)) < 0 ||
        gated(call, GATE_STAT, path, 0) < 0 || enter(call) < 0)
        return NULL;
    e = entry_info(path);
    if (e == NULL)
        rpc_fail_errno(&call->err, errno, "stat %s", path);
    creds_leave();
    return e ? wrap_entry(e) : NULL;
}

json_t *fs_make_dir(struct rpc_call *call, json_t *in)
{
    char path[PATH_MAX], msg[600];
    struct stat st;
    json_t *e = NULL;

    if (resolve_field(call, in, "path", path, sizeof(path)) < 0 ||
        gated(call, GATE_WRITE, path, 0) < 0 || enter(call) < 0)
        return NULL;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            rpc_fail(&call->err, "already_exists", "directory already exists: %s", path);
        else
            rpc_fail(&call->err, "invalid_argument",
                     "path already exists but it is not a directory: %s", path);
    } else if (path_ensure_dirs(path, msg, sizeof(msg)) < 0) {
        rpc_fail_errno(&call->err, errno, "%s", msg);
    } else if ((e = entry_info(path)) == NULL) {
        rpc_fail_errno(&call->err, errno, "stat %s", path);
    }
    creds_leave();
    return e ? wrap_entry(e) : NULL;
}

json_t *fs_move(struct rpc_call *call, json_t *in)
{
    char src[PATH_MAX], dst[PATH_MAX], parent[PATH_MAX], msg[600];
    json_t *e = NULL;

    if (resolve_field(call, in, "source", src, sizeof(src)) < 0 ||
        resolve_field(call, in, "destination", dst, sizeof(dst)) < 0 ||
        gated(call, GATE_MOVE, src, 1) < 0 || gated(call, GATE_MOVE, dst, 1) < 0 || enter(call) < 0)
        return NULL;
    snprintf(parent, sizeof(parent), "%s", dst);
    *strrchr(parent, '/') = '\0';
    if (parent[0] != '\0' && path_ensure_dirs(parent, msg, sizeof(msg)) < 0)
        rpc_fail_errno(&call->err, errno, "%s", msg);
    else if (rename(src, dst) < 0)
        rpc_fail_errno(&call->err, errno,
                       errno == ENOENT ? "source file not found: rename %s %s"
                                       : "error renaming %s to %s",
                       src, dst);
    else if ((e = entry_info(dst)) == NULL)
        rpc_fail_errno(&call->err, errno, "stat %s", dst);
    creds_leave();
    return e ? wrap_entry(e) : NULL;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Appends dir's entries (sorted, not following symlinks) and, below max_depth, theirs. */
static int walk_dir(struct rpc_call *call, const char *dir, int depth, int max_depth,
                    json_t *entries)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, by_name);
    int rc = 0;
    char child[PATH_MAX];
    struct stat st;

    if (n < 0) {
        rpc_fail_errno(&call->err, errno, "error reading directory %s", dir);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        if (rc == 0 && strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0 &&
            snprintf(child, sizeof(child), "%s/%s", strcmp(dir, "/") ? dir : "", nm) <
                (int)sizeof(child) &&
            lstat(child, &st) == 0) {
            if (json_array_size(entries) >= LIST_MAX_ENTRIES) {
                rpc_fail(&call->err, "resource_exhausted", "more than %d entries",
                         LIST_MAX_ENTRIES);
                rc = -1;
            } else {
                json_array_append_new(entries, entry_info_from_stat(child, &st));
                if (S_ISDIR(st.st_mode) && depth < max_depth)
                    rc = walk_dir(call, child, depth + 1, max_depth, entries);
            }
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

json_t *fs_list_dir(struct rpc_call *call, json_t *in)
{
    char path[PATH_MAX];
    unsigned long depth;
    struct stat st;
    char *real = NULL;
    json_t *entries = NULL, *out = NULL;

    if (json_get_u32(in, "depth", 1, &depth) < 0) {
        rpc_fail(&call->err, "invalid_argument", "depth must be an unsigned integer");
        return NULL;
    }
    if (depth == 0)
        depth = 1;
    if (resolve_field(call, in, "path", path, sizeof(path)) < 0 ||
        gated(call, GATE_LIST, path, depth > 1) < 0 || enter(call) < 0)
        return NULL;
    real = realpath(path, NULL);
    if (real == NULL)
        rpc_fail_errno(&call->err, errno, "path not found: %s", path);
    else if (stat(real, &st) < 0)
        rpc_fail_errno(&call->err, errno, "directory not found: %s", real);
    else if (!S_ISDIR(st.st_mode))
        rpc_fail(&call->err, "invalid_argument", "path is not a directory: %s", path);
    else if ((entries = json_array()) != NULL &&
             walk_dir(call, real, 1, (int)(depth > 64 ? 64 : depth), entries) == 0)
        out = json_pack("{s:O}", "entries", entries);
    json_decref(entries);
    free(real);
    creds_leave();
    return out;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
    return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

json_t *fs_remove(struct rpc_call *call, json_t *in)
{
    char path[PATH_MAX];
    struct stat st;
    int failed = 0;

    if (resolve_field(call, in, "path", path, sizeof(path)) < 0 ||
        gated(call, GATE_REMOVE, path, 1) < 0 || enter(call) < 0)
        return NULL;
    /* Like rm -rf: a path that is already gone is not an error. */
    if (lstat(path, &st) < 0) {
        failed = errno != ENOENT;
    } else if (S_ISDIR(st.st_mode)) {
        failed = nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS) != 0;
    } else {
        failed = unlink(path) < 0 && errno != ENOENT;
    }
    if (failed)
        rpc_fail_errno(&call->err, errno, "error removing file or directory %s", path);
    creds_leave();
    return failed ? NULL : json_object();
}

/* Validates a watch request and opens the watcher, as the caller. */
static int open_watch(struct rpc_call *call, json_t *in, struct watcher *w)
{
    char path[PATH_MAX];
    struct stat st;

    if (resolve_field(call, in, "path", path, sizeof(path)) < 0 ||
        gated(call, GATE_WATCH, path, json_get_bool(in, "recursive", 0)) < 0)
        return -1;
    if (stat(path, &st) < 0) {
        rpc_fail_errno(&call->err, errno, "path %s not found", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        rpc_fail(&call->err, "invalid_argument", "path %s not a directory", path);
        return -1;
    }
    if (!json_get_bool(in, "allowNetworkMounts", 0) && watch_is_network_mount(path)) {
        rpc_fail(&call->err, "invalid_argument", "cannot watch path on network filesystem: %s",
                 path);
        return -1;
    }
    if (watcher_open(w, path, json_get_bool(in, "recursive", 0),
                     json_get_bool(in, "includeEntry", 0)) < 0) {
        rpc_fail_errno(&call->err, errno, "error adding path %s to watcher", path);
        return -1;
    }
    return 0;
}

/* Sends each collected event as its own WatchDirResponse. */
static int send_events(struct rpc_call *call, json_t *events)
{
    size_t i;
    json_t *ev;

    json_array_foreach(events, i, ev)
    {
        if (rpc_stream_send(call, json_pack("{s:O}", "filesystem", ev)) < 0)
            return -1;
    }
    json_array_clear(events);
    return 0;
}

static int watch_loop(struct rpc_call *call, struct watcher *w)
{
    long long next_keepalive = envd_now_ms() + call->keepalive_ms;
    json_t *events = json_array();
    int rc = 0;

    for (;;) {
        int ready = rpc_stream_wait(call, w->ifd, &next_keepalive);
        if (ready < 0) {
            rc = -1;
            break;
        }
        if (ready == 0) {
            if (rpc_stream_send(call, json_pack("{s:{}}", "keepalive")) < 0) {
                rc = -1;
                break;
            }
            next_keepalive = envd_now_ms() + call->keepalive_ms;
            continue;
        }
        if (watcher_collect(w, events) < 0) {
            rpc_fail(&call->err, "internal", "watcher error: %s", strerror(errno));
            rc = -1;
            break;
        }
        if (json_array_size(events) > 0) {
            if (send_events(call, events) < 0) {
                rc = -1;
                break;
            }
            next_keepalive = envd_now_ms() + call->keepalive_ms;
        }
    }
    json_decref(events);
    return rc;
}

int fs_watch_dir(struct rpc_call *call, json_t *in)
{
    struct watcher w;
    int rc;

    if (enter(call) < 0)
        return -1;
    if (open_watch(call, in, &w) < 0) {
        creds_leave();
        return -1;
    }
    rc = rpc_stream_send(call, json_pack("{s:{}}", "start")) < 0 ? -1 : watch_loop(call, &w);
    watcher_close(&w);
    creds_leave();
    return rc;
}

/* Watchers of the non-streaming API, by id. Few and short-lived: a list will do. */
struct watcher_entry {
    struct watcher_entry *next;
    char id[40];
    struct watcher w;
};

static pthread_mutex_t watchers_mu = PTHREAD_MUTEX_INITIALIZER;
static struct watcher_entry *watchers;

json_t *fs_create_watcher(struct rpc_call *call, json_t *in)
{
    struct watcher_entry *we = calloc(1, sizeof(*we));
    unsigned char rnd[16];

    if (we == NULL || getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        free(we);
        rpc_fail(&call->err, "internal", "cannot create watcher");
        return NULL;
    }
    for (int i = 0; i < 16; i++)
        snprintf(we->id + 2 * i, 3, "%02x", rnd[i]);
    if (enter(call) < 0) {
        free(we);
        return NULL;
    }
    if (open_watch(call, in, &we->w) < 0) {
        creds_leave();
        free(we);
        return NULL;
    }
    creds_leave();
    pthread_mutex_lock(&watchers_mu);
    we->next = watchers;
    watchers = we;
    pthread_mutex_unlock(&watchers_mu);
    return json_pack("{s:s}", "watcherId", we->id);
}

json_t *fs_get_watcher_events(struct rpc_call *call, json_t *in)
{
    const char *id = json_get_str(in, "watcherId");
    json_t *events = json_array();
    int found = 0;

    if (enter(call) < 0) {
        json_decref(events);
        return NULL;
    }
    pthread_mutex_lock(&watchers_mu);
    for (struct watcher_entry *we = watchers; we != NULL && id != NULL; we = we->next) {
        if (strcmp(we->id, id) == 0) {
            found = 1;
            if (watcher_collect(&we->w, events) < 0)
                found = -1;
            break;
        }
    }
    pthread_mutex_unlock(&watchers_mu);
    creds_leave();
    if (found != 1) {
        json_decref(events);
        if (found == 0)
            rpc_fail(&call->err, "not_found", "watcher with id %s not found", id ? id : "");
        else
            rpc_fail(&call->err, "internal", "watcher error: %s", strerror(errno));
        return NULL;
    }
    return json_pack("{s:o}", "events", events);
}

json_t *fs_remove_watcher(struct rpc_call *call, json_t *in)
{
    const char *id = json_get_str(in, "watcherId");
    struct watcher_entry **pp, *found = NULL;

    pthread_mutex_lock(&watchers_mu);
    for (pp = &watchers; *pp != NULL && id != NULL; pp = &(*pp)->next) {
        if (strcmp((*pp)->id, id) == 0) {
            found = *pp;
            *pp = found->next;
            break;
        }
    }
    pthread_mutex_unlock(&watchers_mu);
    if (found == NULL) {
        rpc_fail(&call->err, "not_found", "watcher with id %s not found", id ? id : "");
        return NULL;
    }
    watcher_close(&found->w);
    free(found);
    return json_object();
}
