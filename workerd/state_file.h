/* state_file.h: the worker's identity, kept across restarts.
 *
 * <state_dir>/worker: "worker_id = ..." and "worker_secret = ...", mode 0600,
 * written to a temporary file, fsync'ed and renamed, so a crash leaves either
 * the old identity or the new one, never half of one. With it a restarted
 * workerd re-enrols as the same worker and gets its unacknowledged commands
 * again. */
#ifndef WORKERD_STATE_FILE_H
#define WORKERD_STATE_FILE_H

#include <stddef.h>

#define STATE_ID_MAX 128
#define STATE_SECRET_MAX 256

struct worker_identity {
    char worker_id[STATE_ID_MAX];
    char worker_secret[STATE_SECRET_MAX]; /* secret: never logged */
};

/* Creates state_dir (0700) if missing. 0, or -1 with err. */
int state_dir_prepare(const char *dir, char *err, size_t errlen);
/* 1 loaded, 0 no identity yet, -1 unreadable/corrupt (err set). */
int state_load(const char *dir, struct worker_identity *id, char *err, size_t errlen);
int state_save(const char *dir, const struct worker_identity *id, char *err, size_t errlen);

#endif
