#include "tier.h"

#include <string.h>

static const char *const names[] = {"NONE", "CONTAINER", "GVISOR", "MICROVM"};

const char *tier_name(enum tier t)
{
    return t >= TIER_NONE && t <= TIER_MICROVM ? names[t] : "UNKNOWN";
}

int tier_parse(const char *s, enum tier *out)
{
    if (!s)
        return -1;
    if (strcmp(s, "UNKNOWN") == 0) {
        *out = TIER_UNKNOWN;
        return 0;
    }
    for (int i = TIER_NONE; i <= TIER_MICROVM; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (enum tier)i;
            return 0;
        }
    return -1;
}
