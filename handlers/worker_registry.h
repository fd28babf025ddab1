/* worker_registry.h: enrolment and identity of workers (the handshake), and
 * their public representation. */
#ifndef CORRAL_WORKER_REGISTRY_H
#define CORRAL_WORKER_REGISTRY_H

#include "request.h"

/* Checks X-Worker-Id / X-Worker-Secret against the pool of the caller's join
 * token. 1 ok (wid filled), 0 answered 403/410, -1 answered 503. */
int worker_authenticate(struct request *req, char wid[33]);

json_t *worker_view(const redisReply *rec, const char *wid);

#endif
