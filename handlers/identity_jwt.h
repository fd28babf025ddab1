/* identity_jwt.h: a sandbox's workload identity token, a JWT-SVID signed
 * with ES256 by its workspace's key (decision 0090). Pure but for OpenSSL
 * (and its random source, for jti): the key's PEM is passed in, never
 * logged. tests/unit/unit_identity.c. */
#ifndef CORRAL_IDENTITY_JWT_H
#define CORRAL_IDENTITY_JWT_H

#include <jansson.h>
#include <stddef.h>

#define IDENTITY_TOKEN_TTL_S 300 /* a token's life: exp = iat + 5 minutes */
#define IDENTITY_ISSUER_MAX 400
#define IDENTITY_HOST_MAX 256
#define IDENTITY_JWT_MAX 4096
#define IDENTITY_B64_COORD 44 /* a P-256 coordinate in base64url, and its NUL */

/* The issuer of ws's tokens, https://<host>/identity/<ws>, and its SPIFFE
 * trust domain, host without its port, lower-cased. host is the request's
 * Host ("name" or "name:port"; letters, digits, '.', '-' only). 0, or -1
 * when host is not such a name. */
int identity_issuer(const char *host, const char *ws, char iss[IDENTITY_ISSUER_MAX],
                    char trust_domain[IDENTITY_HOST_MAX]);

/* What one token says. */
struct svid_claims {
    const char *iss, *trust_domain, *ws, *sandbox, *aud;
    long long iat; /* seconds since the epoch; exp = iat + IDENTITY_TOKEN_TTL_S */
    const char *jti;
};

/* {iss, sub: spiffe://<trust domain>/workspace/<ws>/sandbox/<sandbox>, aud,
 * iat, exp, jti}, or NULL. */
json_t *identity_claims(const struct svid_claims *c);

/* header.claims.signature (ES256, header {alg, typ: JWT, kid}) at out.
 * Steals claims. 0, or -1 (pem not a P-256 key, out short, OpenSSL). */
int identity_jwt_sign(const char *pem, const char *kid, json_t *claims, char *out, size_t outlen);

#endif
