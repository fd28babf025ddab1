/* respond.h: every answer corral-api gives. Errors always have the E2B shape
 * {"code": <status>, "message": "<what was wrong>"}: the message is what a user
 * of the SDK reads, so it names the field or the rule. */
#ifndef CORRAL_RESPOND_H
#define CORRAL_RESPOND_H

#include "request.h"

void respond_json(struct request *req, int status, json_t *body); /* steals body */
void respond_error(struct request *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void respond_empty(struct request *req, int status);
/* A streamed answer: the head now (length < 0: none, the end is the
 * connection's), then the body in pieces with respond_body. */
void respond_stream_head(struct request *req, int status, const char *type, long long length);
/* 0, or -1 when the client has gone. */
int respond_body(struct request *req, const char *p, size_t n);
/* Adds a response header to the next answer (e.g. x-next-token, the route
 * lookup's five X-Corral-*); all of them share 512 bytes. */
void respond_add_header(struct request *req, const char *name, const char *value);

/* Redis did not answer: 503, the one wording every handler uses. */
void respond_store_down(struct request *req);

#define NOT_FOUND_SANDBOX(req) respond_error(req, 404, "sandbox not found")

/* The answer to a change of something by id: n < 0 the state store failed
 * (503), 0 there was no such thing (404 "<what> not found"), else 204. */
void respond_change(struct request *req, int n, const char *what);

#endif
