/*
 * The pure half of the Connect layer (connect_rpc.c does the I/O): a
 * request's message and its call headers, parsed without a socket so
 * tests/envd/unit_envd.c and unit_connect.c check each rule.
 */
#ifndef ENVD_CONNECT_PARSE_H
#define ENVD_CONNECT_PARSE_H

#include "connect_rpc.h"

#include <jansson.h>
#include <stddef.h>

/* Keepalive-Ping-Interval when none (or no valid one) is sent, and the most
 * a client may ask for, in seconds. */
#define RPC_KEEPALIVE_DEFAULT_S 50
#define RPC_KEEPALIVE_MAX_S 3600

/* A request body as a JSON object: plain JSON (unary), or exactly one
 * enveloped frame (stream: flag byte, 4-byte big-endian length, JSON). An
 * empty message is {}. NULL with err set when the frame is truncated, its
 * length does not match, it is compressed, or the JSON is not an object. */
json_t *rpc_parse_message(struct rpc_error *err, const char *body, size_t len, int enveloped);

/* Connect-Timeout-Ms and Keepalive-Ping-Interval (NULL when absent) of a
 * call made at now_ms (monotonic). *deadline_ms: now_ms plus the timeout, 0
 * for none; *keepalive_ms: the interval asked for (1..RPC_KEEPALIVE_MAX_S
 * seconds), else the default. A value that is not all decimal digits, is 0,
 * or overflows is ignored, as if the header were absent. */
void rpc_call_headers_parse(const char *timeout, const char *keepalive, long long now_ms,
                            long long *deadline_ms, int *keepalive_ms);

/* True when the Content-Type ct (NULL when absent) is want, in any case,
 * with or without parameters ("application/json; charset=utf-8"). */
int rpc_content_type_is(const char *ct, const char *want);

#endif
