/* e2b_timeout_parse.h: the bodies of E2B's POST /sandboxes/{id}/timeout
 * ({"timeout"}, required), POST /sandboxes/{id}/connect and /resume
 * ({"timeout", "memory"}, optional), /refreshes ({"duration"}) and their
 * boolean fields (pure: h_e2b.c and h_pause.c read and answer). */
#ifndef CORRAL_E2B_TIMEOUT_PARSE_H
#define CORRAL_E2B_TIMEOUT_PARSE_H

#include <jansson.h>
#include <stddef.h>

/* A boolean field: 1 or 0 (absent or null: 1), or -1 with err naming it. */
int e2b_flag_parse(const json_t *body, const char *field, char *err, size_t errlen);

/* timeout in seconds, in [0, max] (the operator's maximum); -2 when absent
 * and not required; -1 with err. With keep_memory, the "memory" flag too,
 * checked first (false asks for a fresh start, decision 0074). */
long e2b_timeout_parse(const json_t *body, int required, long max, int *keep_memory, char *err,
                       size_t errlen);

/* POST /sandboxes/{id}/refreshes' duration in seconds, in [0,
 * E2B_REFRESH_MAX_S] (0 when absent; the caller cuts it to the operator's
 * maximum), or -1 with err. */
#define E2B_REFRESH_MAX_S 3600
long e2b_refresh_parse(const json_t *body, char *err, size_t errlen);

#endif
