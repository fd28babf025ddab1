/* JWT-SVIDs (identity_jwt.h). The shape is common/registry_token.c's, for
 * another key and other claims: that file signs only the registry's grants. */
#include "identity_jwt.h"

#include "identity_key.h"

#include <ctype.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COORD 32 /* r and s of a P-256 signature, each */

int identity_b64url(const unsigned char *in, size_t n, char *out, size_t outlen)
{
    size_t need = 4 * ((n + 2) / 3) + 1;
    int len;

    if (n > (size_t)1 << 20 || outlen < need)
        return -1;
    len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);
    while (len > 0 && out[len - 1] == '=')
        len--;
    out[len] = '\0';
    for (int i = 0; i < len; i++)
        out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    return len;
}

int identity_der_to_raw(const unsigned char *der, size_t n, unsigned char raw[64])
{
    const unsigned char *p = der;
    ECDSA_SIG *s = n < 128 ? d2i_ECDSA_SIG(NULL, &p, (long)n) : NULL;
    const BIGNUM *r, *sv;
    int rc = -1;

    /* Exactly one DER structure: nothing after it. */
    if (s && p == der + n) {
        ECDSA_SIG_get0(s, &r, &sv);
        if (BN_bn2binpad(r, raw, COORD) == COORD && BN_bn2binpad(sv, raw + COORD, COORD) == COORD)
            rc = 0;
    }
    ECDSA_SIG_free(s);
    return rc;
}

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

/* The JSON of part as base64url at out; its length, or -1. Steals part. */
static int b64url_json(json_t *part, char *out, size_t outlen)
{
    char *text = part ? json_dumps(part, JSON_COMPACT) : NULL;
    int n = text ? identity_b64url((const unsigned char *)text, strlen(text), out, outlen) : -1;

    free(text);
    json_decref(part);
    return n;
}

/* ES256 over msg: JOSE's r || s. */
static int es256(EVP_PKEY *k, const char *msg, unsigned char sig[2 * COORD])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char der[128];
    size_t n = sizeof(der);
    int rc = -1;

    if (md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, k) == 1 &&
        EVP_DigestSign(md, der, &n, (const unsigned char *)msg, strlen(msg)) == 1)
        rc = identity_der_to_raw(der, n, sig);
    EVP_MD_CTX_free(md);
    return rc;
}

int identity_jwt_sign(const char *pem, const char *kid, json_t *claims, char *out, size_t outlen)
{
    EVP_PKEY *k = identity_key_load(pem);
    unsigned char sig[2 * COORD];
    int h = -1, c = -1, s = -1;

    if (k && kid)
        h = b64url_json(json_pack("{s:s, s:s, s:s}", "alg", "ES256", "typ", "JWT", "kid", kid), out,
                        outlen);
    if (h >= 0 && (size_t)h + 2 < outlen) {
        out[h] = '.';
        c = b64url_json(claims, out + h + 1, outlen - (size_t)h - 1);
        claims = NULL; /* taken */
    }
    if (c >= 0 && (size_t)(h + c) + 3 < outlen && es256(k, out, sig) == 0) {
        out[h + 1 + c] = '.';
        s = identity_b64url(sig, sizeof(sig), out + h + c + 2, outlen - (size_t)(h + c) - 2);
    }
    json_decref(claims);
    EVP_PKEY_free(k);
    if (s < 0 && outlen > 0)
        out[0] = '\0';
    return s < 0 ? -1 : 0;
}
