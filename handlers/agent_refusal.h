/* agent_refusal.h: what a sandbox on an agent-mode worker cannot do
 * (decision 0054). A session on a person's machine is not a container: it
 * cannot be frozen, committed to an image or forked. Its worker reports the
 * runtime "agent", so its record says so. */
#ifndef CORRAL_AGENT_REFUSAL_H
#define CORRAL_AGENT_REFUSAL_H

#include "request.h"
#include "tier.h"

/* 1 when the caller's sandbox req->params[0] runs on an agent: answered 409
 * naming what (e.g. "paused") and why. 0 go on (any other sandbox, or none:
 * the operation answers that itself). -1 answered 503. */
int agent_refusal(struct request *req, const char *what);

#endif
