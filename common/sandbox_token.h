/* sandbox_token.h: the per-sandbox tokens of the E2B data plane, derived (not
 * stored) from the gateway secret, so the nginx module can check them without
 * a backend call: hex(HMAC-SHA-256(gateway secret, "<kind>:<sandbox id>")).
 * See docs/data-plane.md. */
#ifndef CORRAL_SANDBOX_TOKEN_H
#define CORRAL_SANDBOX_TOKEN_H

#include "secret.h"

#define SANDBOX_TOKEN_ENVD "envd"
#define SANDBOX_TOKEN_TRAFFIC "traffic"

void sandbox_token(const char *gateway_secret, const char *kind, const char *sbid,
                   char out[SECRET_MAC_HEX]);

#endif
