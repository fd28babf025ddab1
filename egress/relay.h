/* relay.h: the two-way byte copy of a tunnel or a forwarded request. */
#ifndef CORRAL_EGRESS_RELAY_H
#define CORRAL_EGRESS_RELAY_H

#include "http_body.h"

/* Copies a->b and b->a on non-blocking sockets until both directions have
 * ended, one side fails, or nothing moved for idle_ms. An end of input on one
 * side becomes shutdown(SHUT_WR) on the other once its bytes are written, so
 * half-closed protocols work. Does not close a or b.
 *
 * With `request` (a forwarded request whose head was sent, its body framing
 * advanced past what was sent with it), a->b carries only the rest of that
 * body, never what a sends after it; the relay ends once b's answer is
 * relayed and its end passed on. NULL for a tunnel. */
void relay_run(int a, int b, int idle_ms, struct http_body *request);

#endif
