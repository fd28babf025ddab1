/*
 * The expiry is checked after the signature, so a client learns why an
 * otherwise valid URL is refused; the clock is a parameter so the rules can
 * be tested at their edges.
 */
#include "auth_parse.h"
#include "decimal_parse.h"

#include <stdio.h>

int auth_expiration_check(const char *expiration, int required, long long now, char *msg,
                          size_t msgsz)
{
    long long exp;

    if (expiration == NULL) {
        if (!required)
            return 0;
        snprintf(msg, msgsz, "signature_expiration is required by this server");
        return -1;
    }
    if (decimal_parse(expiration, &exp) < 0) {
        snprintf(msg, msgsz, AUTH_EXPIRATION_NOT_DECIMAL);
        return -1;
    }
    if (exp < now) {
        snprintf(msg, msgsz, "signature is already expired");
        return -1;
    }
    if (exp > now + AUTH_SIGNATURE_MAX_WINDOW_S + AUTH_SIGNATURE_CLOCK_SKEW_S) {
        snprintf(msg, msgsz,
                 "signature_expiration is more than %d days ahead (the most envd accepts)",
                 AUTH_SIGNATURE_MAX_WINDOW_S / 86400);
        return -1;
    }
    return 0;
}
