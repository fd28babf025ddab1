/* worker_batch.h: the writes and the answer of a worker's batch route
 * (h_telemetry.c, h_worker_audit.c): every element of a checked body written
 * in turn, the ones not this worker's refused by name, nothing after the
 * store fails. */
#ifndef CORRAL_WORKER_BATCH_H
#define CORRAL_WORKER_BATCH_H

#include "request.h"

#include <jansson.h>
#include <stddef.h>

struct worker_batch {
    const void *v; /* n elements of size bytes */
    size_t n, size;
    /* 1 written, 0 refused (not this worker's), -1 the store failed */
    int (*write)(struct request *req, const char *wid, const void *elem);
    /* how a refused element is named in the answer */
    json_t *(*refused_id)(const void *elem, size_t i);
};

/* Writes b's elements as worker wid; answers 200 {accepted, refused: [ids]},
 * or 503 once a write fails (the elements after it not tried). */
void worker_batch_write(struct request *req, const char *wid, const struct worker_batch *b);

#endif
