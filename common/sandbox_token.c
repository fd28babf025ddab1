#include "sandbox_token.h"

#include <stdio.h>

void sandbox_token(const char *gateway_secret, const char *kind, const char *sbid,
                   char out[SECRET_MAC_HEX])
{
    char msg[128];

    snprintf(msg, sizeof(msg), "%s:%s", kind, sbid);
    secret_mac_hex(gateway_secret, msg, out);
}
