/* dataport_frame.h: where an HTTP/1.1 message ends, for the data port's
 * keep-alive (pure; dataport.c does the I/O, tests/workerd/unit_dataport.c
 * runs these).
 *
 * The data port forwards bytes unchanged, but on a kept connection it must
 * know exactly where each request and each response ends: a request body
 * that ran on would reach the wrong sandbox, a response that ran on would be
 * read by nginx as the answer to the next request on that connection, which
 * may be for another sandbox. So a sandbox's response head is parsed more
 * strictly than nginx parses it (anything nginx might frame differently is
 * refused, and the connections closed): where both accept a response they
 * agree on its end. */
#ifndef CORRAL_DATAPORT_FRAME_H
#define CORRAL_DATAPORT_FRAME_H

#include <stddef.h>

enum dataport_body_kind {
    DP_BODY_NONE,    /* no body: done from the start */
    DP_BODY_LENGTH,  /* Content-Length bytes */
    DP_BODY_CHUNKED, /* chunked transfer coding, trailers included */
    DP_BODY_CLOSE,   /* until the sender closes (responses only) */
};

struct dataport_body {
    enum dataport_body_kind kind;
    unsigned long long left; /* LENGTH: bytes to come; CHUNKED: of this chunk */
    int st;                  /* CHUNKED: parser state */
    unsigned line;           /* CHUNKED: length of the size or trailer line so far */
    unsigned trailers;       /* CHUNKED: trailer bytes so far */
    int done;
};

/* A body of kind (length for DP_BODY_LENGTH). */
void dataport_body_init(struct dataport_body *b, enum dataport_body_kind kind,
                        unsigned long long length);

/* Of the n bytes at p, how many belong to the body (the rest, if any, comes
 * after it); b->done is set when the body's last byte is among them. -1 when
 * the chunked coding is malformed or over its limits. */
long long dataport_body_feed(struct dataport_body *b, const char *p, size_t n);

/* A response head from a sandbox. */
struct dataport_resp {
    int status;
    int keep;     /* HTTP/1.1 and no "close" in Connection */
    int chunked;  /* Transfer-Encoding: chunked */
    long long cl; /* Content-Length, or -1 */
};

/* Parses a complete response head (len bytes ending in the blank line). 0, or
 * -1 with the reason in why: not HTTP/1.x, a bare CR or LF, a NUL or control
 * byte, a folded line, a header name that is not a token, Content-Length
 * malformed or repeated, Transfer-Encoding other than one "chunked", or both. */
int dataport_resp_parse(const char *buf, size_t len, struct dataport_resp *r, const char **why);

/* How the body of response r to a request (HEAD or not) is delimited, as
 * RFC 9112 section 6.3 and nginx's proxy module delimit it: a 204, a 304, a
 * 1xx or an answer to HEAD ends at its head, whatever Content-Length or
 * Transfer-Encoding it claims. 1xx and upgrades are the caller's. */
void dataport_resp_body(const struct dataport_resp *r, int head_request, struct dataport_body *b);

/* 1 when r cannot have a body (as above) yet claims one: Transfer-Encoding,
 * or a Content-Length above 0. Its sender frames messages in a way nobody
 * reads them, so the bytes it claims would come after the response's end:
 * its connection is closed, never reused (decision 0066). */
int dataport_resp_false_body(const struct dataport_resp *r, int head_request);

/* Room dataport_resp_forward may add to a head. */
#define DATAPORT_KEEP_EXTRA 160

/* Writes into out (len + DATAPORT_KEEP_EXTRA bytes) the response head the
 * gateway gets: without any X-Corral-* line the sandbox wrote (it cannot
 * speak for the data port), without Content-Length or Transfer-Encoding in
 * a 204 (RFC 9110 forbids both there: no client sees a 204 with a body
 * length) and, when keep is not NULL (at most 127 bytes),
 * with "X-Corral-Keep: <keep>": the data port's word that the gateway may
 * send its next request on this connection (decision 0051). Its length. */
size_t dataport_resp_forward(const char *head, size_t len, const char *keep, char *out);

/* The end of a head ("\r\n\r\n") in buf, or NULL. *seen is how much of buf
 * earlier calls searched: a head that arrives a byte at a time is searched
 * once in all, not once per byte. Set to 0 when the end is found. */
const char *dataport_head_end(const char *buf, size_t len, size_t *seen);

#endif
