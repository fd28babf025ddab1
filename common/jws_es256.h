/* jws_es256.h: JSON Web Tokens signed with ES256 (ECDSA on P-256, SHA-256),
 * the one signing code of the registry's token auth (registry_token.c) and of
 * workload identity (handlers/identity_jwt.c, decision 0090). */
#ifndef CORRAL_JWS_ES256_H
#define CORRAL_JWS_ES256_H

#include <jansson.h>
#include <openssl/evp.h>
#include <stddef.h>

#define ES256_COORD 32 /* r and s of a signature, x and y of a key: bytes each */

/* pem's private key when it is on P-256 (an encrypted one is refused, never
 * prompted for), else NULL. */
EVP_PKEY *es256_key_load(const char *pem);

/* base64url without padding of in (n bytes), NUL-terminated at out; its
 * length, or -1 when out is short. */
int b64url_encode(const unsigned char *in, size_t n, char *out, size_t outlen);

/* OpenSSL's DER signature as JOSE's r || s; exactly one DER structure. 0, -1. */
int es256_der_to_raw(const unsigned char *der, size_t n, unsigned char raw[2 * ES256_COORD]);

/* header.claims.signature at out (both JSON objects, taken whatever happens).
 * 0, or -1 with out "". */
int es256_jwt_sign(EVP_PKEY *k, json_t *header, json_t *claims, char *out, size_t outlen);

#endif
