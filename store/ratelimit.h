/* ratelimit.h: the per-credential request budget (decision 0028).
 *
 * Counted only after the credential has been verified, so that a wrong secret
 * under someone's public key id costs that key nothing (it still counts
 * against its address, in nginx). Rate and burst are corral.conf's key_rate
 * and key_burst; the bucket is shared by every corral-api process (Redis). */
#ifndef CORRAL_RATELIMIT_H
#define CORRAL_RATELIMIT_H

#include "rconn.h"
#include "token.h"

/* Takes one request from cred's budget. 1 allowed; 0 over it, with *retry_ms
 * the wait until the next request fits; -1 Redis failed. */
int ratelimit_take(struct rconn *rc, const struct token *cred, long rate, long burst,
                   long *retry_ms);

#endif
