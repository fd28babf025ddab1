/* workspace_limits_parse.h: the body of PATCH /v1/workspace checked (pure:
 * no Redis, no FastCGI): each field a limit of ws_limit_defs
 * (store/accounts.h), an integer within its range and the operator's
 * ceiling (decision 0063). */
#ifndef CORRAL_WORKSPACE_LIMITS_PARSE_H
#define CORRAL_WORKSPACE_LIMITS_PARSE_H

#include "accounts.h"

#include <jansson.h>
#include <stddef.h>

/* Fills limits/set from body; 0, or -1 with err naming the field (the
 * caller then stores nothing of the body). */
int workspace_limits_parse(const json_t *body, const long ceilings[WS_LIMIT_COUNT],
                           long limits[WS_LIMIT_COUNT], int set[WS_LIMIT_COUNT], char *err,
                           size_t errlen);

#endif
