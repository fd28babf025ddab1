/* identity_key.h: a workspace's identity signing key, an EC P-256 key pair
 * (decision 0090): made, read back from its PEM, and its public half as a
 * JWK's x and y, with its kid, the RFC 7638 thumbprint. Pure but for
 * OpenSSL; a private key is passed around as PEM text and never logged. */
#ifndef CORRAL_IDENTITY_KEY_H
#define CORRAL_IDENTITY_KEY_H

#include "identity_keys.h"

#include <openssl/evp.h>

/* A new P-256 private key as PKCS#8 PEM (malloc'd), or NULL. */
char *identity_key_generate(void);

/* pem's public coordinates (base64url) and kid: SHA-256 of the JWK
 * {"crv","kty","x","y"} in that order without spaces, base64url. 0, or -1. */
int identity_key_public(const char *pem, struct idkey_public *out);

#endif
