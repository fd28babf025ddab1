/* http_body.h: where a forwarded request's body ends, read as it streams
 * past, so the proxy forwards that request and not one byte of the next
 * (decision 0065). Pure. */
#ifndef CORRAL_EGRESS_HTTP_BODY_H
#define CORRAL_EGRESS_HTTP_BODY_H

#include "http_head.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum body_state {
    BODY_DATA,    /* `left` bytes of payload: the body, or a chunk's data */
    BODY_SIZE,    /* a chunk-size's hex digits */
    BODY_EXT,     /* ;chunk-ext up to CR */
    BODY_SIZE_LF, /* the LF ending a chunk-size line */
    BODY_DATA_CR, /* the CRLF after a chunk's data */
    BODY_DATA_LF,
    BODY_TRAILER,    /* the start of a trailer line, or the final CRLF */
    BODY_TRAILER_IN, /* inside a trailer line */
    BODY_TRAILER_LF, /* the LF ending a trailer line */
    BODY_FINAL_LF,   /* the LF ending the message */
    BODY_DONE,
    BODY_BAD, /* malformed: never a state, only what a byte leads to */
};

struct http_body {
    enum body_state state;
    bool chunked;
    uint64_t left;   /* BODY_DATA */
    unsigned digits; /* BODY_SIZE */
};

/* The body r's head announces; an empty one is BODY_DONE at once. */
void http_body_start(struct http_body *b, const struct http_req *r);

/* Consumes the body's bytes at the front of buf[0..n): how many belong to
 * it (fewer than n only when it ended), or -1 when the chunked framing is
 * malformed: then nothing more may be forwarded. */
long http_body_feed(struct http_body *b, const char *buf, size_t n);

/* Bytes that are payload whatever they hold (the caller may move them without
 * reading them), and taking them. */
uint64_t http_body_room(const struct http_body *b);
void http_body_skip(struct http_body *b, uint64_t n);

bool http_body_done(const struct http_body *b);

#endif
