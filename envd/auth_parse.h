/* A signed URL's expiry judged (decision 0035): pure, so
 * tests/envd/unit_auth.c can give it any clock. */
#ifndef ENVD_AUTH_PARSE_H
#define ENVD_AUTH_PARSE_H

#include <stddef.h>

/* A signed URL lives at most this long (decision 0035), plus the slack for a
 * client whose clock runs ahead of the host's. */
#define AUTH_SIGNATURE_MAX_WINDOW_S (7 * 86400)
#define AUTH_SIGNATURE_CLOCK_SKEW_S 300

/* The answer to an expiry that is not decimal seconds (or too long to be). */
#define AUTH_EXPIRATION_NOT_DECIMAL                                                                \
    "signature_expiration must be a Unix time in seconds (digits only)"

/* The signature_expiration parameter (NULL when absent) against now (Unix
 * seconds): decimal digits only, not past, at most the window (plus skew)
 * ahead; an absent one passes unless required. 0 ok; -1 with msg filled. */
int auth_expiration_check(const char *expiration, int required, long long now, char *msg,
                          size_t msgsz);

#endif
