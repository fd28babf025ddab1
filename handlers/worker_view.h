/* worker_view.h: a worker's record (store/worker_store.h) as GET /v1/workers
 * and `corralctl workers` show it. */
#ifndef CORRAL_WORKER_VIEW_H
#define CORRAL_WORKER_VIEW_H

#include "worker_store.h"

#include <jansson.h>

/* A worker as GET /v1/workers shows it. */
json_t *worker_view(const struct worker *w);

#endif
