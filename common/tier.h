/* tier.h: isolation tiers. One property is ranked: resistance to kernel escape
 * by a hostile tenant. UNKNOWN (an unverified runtime) satisfies no requirement. */
#ifndef CORRAL_TIER_H
#define CORRAL_TIER_H

/* The runtime an agent-mode worker reports (decision 0054): tier NONE, or
 * CONTAINER with os_sandbox = bwrap. Its sessions are not containers: the
 * control plane never asks it to pause, snapshot or mount a volume. */
#define AGENT_RUNTIME_NAME "agent"

enum tier { TIER_UNKNOWN = -1, TIER_NONE = 0, TIER_CONTAINER, TIER_GVISOR, TIER_MICROVM };

const char *tier_name(enum tier t);
/* 0 and *out set when s names a tier (UNKNOWN included); -1 otherwise. */
int tier_parse(const char *s, enum tier *out);

#endif
