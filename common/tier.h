/* tier.h: isolation tiers. One property is ranked: resistance to kernel escape
 * by a hostile tenant. UNKNOWN (an unverified runtime) satisfies no requirement. */
#ifndef CORRAL_TIER_H
#define CORRAL_TIER_H

enum tier { TIER_UNKNOWN = -1, TIER_NONE = 0, TIER_CONTAINER, TIER_GVISOR, TIER_MICROVM };

const char *tier_name(enum tier t);
/* 0 and *out set when s names a tier (UNKNOWN included); -1 otherwise. */
int tier_parse(const char *s, enum tier *out);

#endif
