/* commands.h: what the control plane tells a worker, appended to the worker's
 * Redis Stream. The stream's consumer group keeps every delivered command
 * pending until the worker acknowledges it, which is what makes delivery
 * survive a crash of the worker or of a handler. */
#ifndef CORRAL_COMMANDS_H
#define CORRAL_COMMANDS_H

#include "rconn.h"

#include <jansson.h>
#include "sandbox_store.h"

/* A stored create's field in place of a secure sandbox's envd access token:
 * no sandbox credential is ever written to Redis (decision 0067). The
 * heartbeat replaces it with envd_access_token, derived from the gateway
 * secret, as the command goes to the worker over TLS. */
#define CMD_ENVD_TOKEN_DUE "envd_token_due"

/* Builds the create command from the sandbox's record (env vars sealed, no
 * token: see CMD_ENVD_TOKEN_DUE). */
int command_send_create(struct rconn *rc, const char *pool, const char *wid,
                        const struct sandbox_record *record);
int command_send_kill(struct rconn *rc, const char *pool, const char *wid, const char *sbid);
/* "pause" (freeze 1) or "resume": the worker freezes or thaws the container.
 * args (taken; NULL: none) for the other kind (decision 0074): {"memory":
 * false} stops a paused one and starts a resumed one afresh; a resume's
 * {"egress": policy or null} is the policy it gets before it runs. */
int command_send_freeze(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                        int freeze, json_t *args);
/* A command about sbid with arguments (taken): "snapshot" {snapshot_id,
 * image, workspace}, "image_remove" {image}. */
int command_send_args(struct rconn *rc, const char *pool, const char *wid, const char *type,
                      const char *sbid, json_t *args);
/* A caller will wait for sbid's kill (set before the kill is sent): only
 * then does the worker's word make a wake, so that a worker naming ids
 * nobody waits for stores nothing. 0, -1 Redis. */
int command_kill_expect(struct rconn *rc, const char *pool, const char *wid, const char *sbid);
/* A worker said sbid's kill is done (its container gone, no request routed
 * to it): wakes the caller waiting in command_kill_await, if one expects it.
 * 0, -1 Redis. */
int command_kill_done(struct rconn *rc, const char *pool, const char *wid, const char *sbid);
/* Waits up to block_ms for command_kill_done. 1 done, 0 not in time, -1 Redis. */
int command_kill_await(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                       int block_ms);
/* Creates the stream and its group if missing (a new or returning worker). */
/* Drops a worker's stream (it was declared dead): a returning worker starts
 * afresh. 0 or -1. */
int command_stream_drop(struct rconn *rc, const char *pool, const char *wid);
int command_stream_init(struct rconn *rc, const char *pool, const char *wid);

#endif
