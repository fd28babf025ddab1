/* commands.h: what the control plane tells a worker, appended to the worker's
 * Redis Stream. The stream's consumer group keeps every delivered command
 * pending until the worker acknowledges it, which is what makes delivery
 * survive a crash of the worker or of a handler. */
#ifndef CORRAL_COMMANDS_H
#define CORRAL_COMMANDS_H

#include "rconn.h"

#include <jansson.h>
#include "sandbox_store.h"

/* Builds the create command from the sandbox's record. It carries the envd
 * access token of a secure sandbox, derived from gateway_secret, for the
 * worker to hand to envd. */
int command_send_create(struct rconn *rc, const char *gateway_secret, const char *pool,
                        const char *wid, const struct sandbox_record *record);
int command_send_kill(struct rconn *rc, const char *pool, const char *wid, const char *sbid);
/* "pause" (freeze 1) or "resume": the worker freezes or thaws the container. */
int command_send_freeze(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                        int freeze);
/* A command about sbid with arguments (taken): "snapshot" {snapshot_id,
 * image, workspace}, "image_remove" {image}. */
int command_send_args(struct rconn *rc, const char *pool, const char *wid, const char *type,
                      const char *sbid, json_t *args);
/* Creates the stream and its group if missing (a new or returning worker). */
int command_stream_init(struct rconn *rc, const char *pool, const char *wid);

#endif
