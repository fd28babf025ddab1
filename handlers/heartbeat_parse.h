/* heartbeat_parse.h: the body of POST /v1/worker/heartbeat checked (pure: no
 * Redis, no FastCGI) before anything of it is applied: the acks, the
 * sandboxes' states, the killed, the problem, the snapshots' outcomes and
 * the warm pools. */
#ifndef CORRAL_HEARTBEAT_PARSE_H
#define CORRAL_HEARTBEAT_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define HEARTBEAT_MAX_BATCH 1000 /* acks, killed */
#define HEARTBEAT_WARM_KINDS_MAX 8
#define HEARTBEAT_WARM_SIZE_MAX 16

/* 0, or -1 with err (answered 400). */
int heartbeat_body_check(const json_t *body, char *err, size_t errlen);

#endif
