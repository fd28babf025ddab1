/*
 * Connect protocol, JSON codec, as the e2b SDK speaks it: unary calls are a
 * JSON body answered with JSON, server streams are enveloped frames (flag
 * byte, 4-byte big-endian length, JSON) ended by a frame with flag 0x02.
 */
#ifndef ENVD_CONNECT_RPC_H
#define ENVD_CONNECT_RPC_H

#include <jansson.h>

#include "http.h"
#include "users.h"

struct rpc_error {
    const char *code; /* NULL: no error */
    char message[1024];
};

struct rpc_call {
    struct http_req *req;
    struct envd_user user;
    struct rpc_error err;
    long long deadline_ms; /* monotonic; 0 = none (Connect-Timeout-Ms) */
    int keepalive_ms;      /* Keepalive-Ping-Interval, for streams */
    int stream_broken;     /* the client went away mid-stream */
};

typedef json_t *(*rpc_unary_fn)(struct rpc_call *call, json_t *in);
/* Returns 0 when the stream ended normally, -1 with call->err set (or stream_broken). */
typedef int (*rpc_stream_fn)(struct rpc_call *call, json_t *in);

void rpc_fail(struct rpc_error *e, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Picks the Connect code for an errno: ENOENT not_found, EACCES permission_denied, ... */
void rpc_fail_errno(struct rpc_error *e, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The HTTP status Connect assigns to a code (connectrpc.com/docs/protocol); 500
 * for a code it does not know. */
int rpc_code_status(const char *code);

/* Handles POST /<package>.<Service>/<Method>. */
void rpc_dispatch(struct http_req *r);

/* Sends one message on a server stream; takes ownership of msg. -1: the client is gone. */
int rpc_stream_send(struct rpc_call *call, json_t *msg);
/* Sends an already encoded frame (flag byte + length + JSON). */
int rpc_stream_send_frame(struct rpc_call *call, const char *frame, size_t len);
/* Encodes msg (not consumed) as a data frame; malloc'ed, length in *len. */
char *rpc_encode_frame(json_t *msg, size_t *len);

/* Keepalive/deadline aware wait used by every stream: polls the client socket and fd.
 * Returns 1 when fd is readable, 0 when a keepalive is due, -1 client gone, -2 deadline. */
int rpc_stream_wait(struct rpc_call *call, int fd, long long *next_keepalive_ms);

/* JSON helpers for proto3 JSON. */
json_t *json_str_lossy(const char *s);
/* uint32 from a JSON number or numeric string; def when absent. -1 when malformed. */
int json_get_u32(json_t *obj, const char *key, unsigned long def, unsigned long *out);
const char *json_get_str(json_t *obj, const char *key);
int json_get_bool(json_t *obj, const char *key, int def);

#endif
