/* worker_registry.h: a worker's identity as a request proves it, and its
 * public representation; the record itself is store/worker_store.h. */
#ifndef CORRAL_WORKER_REGISTRY_H
#define CORRAL_WORKER_REGISTRY_H

#include "request.h"
#include "worker_store.h"
#include "worker_view.h"

/* Checks X-Worker-Id / X-Worker-Secret against the pool of the caller's join
 * token. 1 ok (wid filled), 0 answered 403/410, -1 answered 503. */
int worker_authenticate(struct request *req, char wid[33]);

/* Whether secret is the one this pool's worker id was given: 1 yes (*alive
 * says whether it is still enrolled and alive), 0 no, -1 Redis failed. */
int worker_check_secret(struct request *req, const char *id, const char *secret, int *alive);

#endif
