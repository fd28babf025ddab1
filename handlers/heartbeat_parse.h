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

/* The warm pools (checked) that hold a ready sandbox, as placement reads
 * them: ",template:runtime," for each (",": none). Sized for
 * HEARTBEAT_WARM_KINDS_MAX kinds of 64 + 1 + 24 bytes. */
#define HEARTBEAT_WARM_READY_LEN (HEARTBEAT_WARM_KINDS_MAX * 90 + 2)
void heartbeat_warm_ready(const json_t *warm, char out[HEARTBEAT_WARM_READY_LEN]);

#endif
