/* warm_index.h: which container a claimed warm sandbox is (decision 0082).
 *
 * A claim answers before its container is renamed to the sandbox's name
 * (dockerd's rename took 5 to 150 ms here, most of a warm create's time):
 * until then, and after, the sandbox's container is found by its container
 * id through this index. warm_record.c fills it from its records, at start
 * and at each claim, and empties it at a kill. Every thread reads it:
 * containers_name and containers_sbid_of go through it. */
#ifndef WORKERD_WARM_INDEX_H
#define WORKERD_WARM_INDEX_H

#include <stddef.h>

/* sbid was claimed as warm sandbox warm_id, whose container id is ctr.
 * 0, or -1 (out of memory, or a value too long). */
int warm_index_put(const char *sbid, const char *warm_id, const char *ctr);

/* sbid forgotten (nothing when it is not there). */
void warm_index_drop(const char *sbid);

/* sbid's container id into out: 1, or 0 when sbid is no claimed sandbox. */
int warm_index_ctr(const char *sbid, char *out, size_t len);

/* The sandbox that claimed warm_id into out: 1, or 0 when none did. */
int warm_index_sbid(const char *warm_id, char *out, size_t len);

#endif
