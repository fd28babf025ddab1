/* JWT-SVIDs (identity_jwt.h), signed by common/jws_es256.c as the registry's
 * tokens are. */
#include "identity_jwt.h"

#include "identity_key.h"
#include "jws_es256.h"

#include <ctype.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* host's name part (before ":port"), lower-cased, into td; 0, or -1. */
static int host_name(const char *host, char td[IDENTITY_HOST_MAX])
{
    size_t n = host ? strcspn(host, ":") : 0;
    const char *port = host ? host + n : "";

    if (n == 0 || n >= IDENTITY_HOST_MAX || host[0] == '.' || host[0] == '-' ||
        host[n - 1] == '.' ||
        strspn(host, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                     "0123456789.-") != n)
        return -1;
    if (*port && (strlen(port) < 2 || strlen(port) > 6 ||
                  strspn(port + 1, "0123456789") != strlen(port + 1)))
        return -1;
    for (size_t i = 0; i < n; i++)
        td[i] = (char)tolower((unsigned char)host[i]);
    td[n] = '\0';
    return 0;
}

int identity_issuer(const char *host, const char *ws, char iss[IDENTITY_ISSUER_MAX],
                    char trust_domain[IDENTITY_HOST_MAX])
{
    int n;

    if (host_name(host, trust_domain) != 0)
        return -1;
    n = snprintf(iss, IDENTITY_ISSUER_MAX, "https://%s/identity/%s", host, ws);
    return n > 0 && n < IDENTITY_ISSUER_MAX ? 0 : -1;
}

json_t *identity_claims(const struct svid_claims *c)
{
    char sub[IDENTITY_ISSUER_MAX + 128];

    if (!c->iss || !c->trust_domain || !c->ws || !c->sandbox || !c->aud || !c->jti)
        return NULL;
    snprintf(sub, sizeof(sub), "spiffe://%s/workspace/%s/sandbox/%s", c->trust_domain, c->ws,
             c->sandbox);
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:s}", "iss", c->iss, "sub", sub, "aud", c->aud,
                     "iat", (json_int_t)c->iat, "exp", (json_int_t)(c->iat + IDENTITY_TOKEN_TTL_S),
                     "jti", c->jti);
}

int identity_jwt_sign(const char *pem, const char *kid, json_t *claims, char *out, size_t outlen)
{
    EVP_PKEY *k = kid ? es256_key_load(pem) : NULL;
    int rc = es256_jwt_sign(
        k, json_pack("{s:s, s:s, s:s}", "alg", "ES256", "typ", "JWT", "kid", kid ? kid : ""),
        claims, out, outlen);

    EVP_PKEY_free(k);
    return k ? rc : -1;
}
