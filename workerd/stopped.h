/* stopped.h: the sandboxes whose container this worker stopped on purpose.
 *
 * A pause without memory (decision 0074) stops the container: its processes
 * end, its files stay. dockerd then lists it "exited", exactly as a container
 * whose envd died; only this set tells the two apart, so every place that
 * turns a container's state into a report (the listing, an inspect after a
 * "die", a refused pause or resume) asks it first and says "paused".
 *
 * The set outlives workerd: one empty file per sandbox in
 * <state_dir>/stopped/, created (and the directory synced) BEFORE the stop is
 * asked of dockerd, removed only once the container runs again or is gone. A
 * crash between the mark and the stop leaves a mark on a running container:
 * stopped_prune drops those at start (the pause comes again, unacknowledged,
 * and marks again). Ids never come back, so a mark never names a new sandbox.
 * Thread-safe: the events thread asks while the main thread marks. */
#ifndef WORKERD_STOPPED_H
#define WORKERD_STOPPED_H

#include "docker_api.h"

#include <stddef.h>

/* Loads <state_dir>/stopped/ (made if missing). 0, or -1 with err. */
int stopped_load(const char *state_dir, char *err, size_t errlen);

/* Marks sbid stopped on purpose, durably. 0, or -1 (err: the file system). */
int stopped_mark(const char *sbid, char *err, size_t errlen);

/* Forgets sbid (it runs again, or is gone). Nothing if it was not marked. */
void stopped_clear(const char *sbid);

/* 1 when sbid is marked. */
int stopped_has(const char *sbid);

/* Drops the marks whose container is absent or running (a crash came between
 * a mark and its stop, or between a start and its clear). At start, before
 * the first listing. */
void stopped_prune(struct docker *d, const char *wid);

#endif
