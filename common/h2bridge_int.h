/* h2bridge_int.h: what h2bridge.c (the session and its callbacks) and
 * h2bridge_run.c (the loop) share; nothing outside them includes it. */
#ifndef CORRAL_H2BRIDGE_INT_H
#define CORRAL_H2BRIDGE_INT_H

#include "h2bridge.h"

#include <nghttp2/nghttp2.h>
#include <stdint.h>

struct h2b_stream {
    int32_t id;
    int fd;
    unsigned char *in; /* from the peer, not yet written to fd */
    size_t in_len, in_cap;
    int peer_eof; /* the peer ended its half: shut fd's write side once in is out */
    int wr_shut;  /* done */
    int deferred; /* our data waits for fd to be readable */
    int closed;   /* nghttp2 is done with it; only in is left to write */
    int connect;  /* accepter: the request is a CONNECT */
    int status;   /* opener: the answer's :status */
    char authority[256];
    struct h2b_stream *next;
};

struct h2b {
    nghttp2_session *s;
    enum h2b_role role;
    struct h2b_io io;
    h2b_accept_fn accept;
    void *actx;
    struct h2b_stream *streams;
    const uint8_t *pend; /* nghttp2's bytes not yet sent on the tunnel */
    size_t pend_len;
    int64_t last_rx, last_ping;
    int broken; /* a GOAWAY with an error was sent or received: the end is -1 */
    struct h2b_stats st;
};

struct h2b_stream *h2b_stream_find(struct h2b *b, int32_t id);
/* Writes what in holds to fd, acknowledging it to the peer. -1: fd broke
 * (the stream is reset). */
int h2b_stream_flush(struct h2b *b, struct h2b_stream *st);
/* Out of the list, fd closed, freed. */
void h2b_stream_drop(struct h2b *b, struct h2b_stream *st);

#endif
