/* registry_token.c: ES256 JWTs for the distribution registry's token auth. */
#include "registry_token.h"

#include "jws_es256.h"
#include "secret.h"

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>

#define KID_BYTES 30 /* libtrust keeps 240 bits of the hash */

int registry_key_check(const char *pem)
{
    EVP_PKEY *k = es256_key_load(pem);

    EVP_PKEY_free(k);
    return k ? 0 : -1;
}

/* RFC 4648 base32 of 30 bytes (exactly 48 characters), grouped by 4. */
static void kid_encode(const unsigned char *b, char kid[REGISTRY_KID_SIZE])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    size_t o = 0;

    for (size_t i = 0; i < KID_BYTES * 8 / 5; i++) {
        size_t bit = i * 5, byte = bit / 8;
        unsigned v = (unsigned)b[byte] << 8 | (byte + 1 < KID_BYTES ? b[byte + 1] : 0);

        if (i > 0 && i % 4 == 0)
            kid[o++] = ':';
        kid[o++] = alphabet[(v >> (11 - bit % 8)) & 31];
    }
    kid[o] = '\0';
}

static int kid_of(EVP_PKEY *k, char kid[REGISTRY_KID_SIZE])
{
    unsigned char *der = NULL, hash[SHA256_DIGEST_LENGTH];
    int n = i2d_PUBKEY(k, &der);

    if (n <= 0)
        return -1;
    SHA256(der, (size_t)n, hash);
    OPENSSL_free(der);
    kid_encode(hash, kid);
    return 0;
}

int registry_key_id(const char *pem, char kid[REGISTRY_KID_SIZE])
{
    EVP_PKEY *k = es256_key_load(pem);
    int rc = k ? kid_of(k, kid) : -1;

    EVP_PKEY_free(k);
    return rc;
}

/* "a,b" -> ["a", "b"] */
static json_t *action_list(const char *csv)
{
    json_t *out = json_array();
    const char *p = csv;

    while (out && p && *p) {
        size_t n = strcspn(p, ",");
        json_array_append_new(out, json_stringn(p, n));
        p += n + (p[n] == ',');
    }
    return out;
}

static json_t *claims(const struct registry_grant *g)
{
    char jti[33];
    json_t *actions = action_list(g->actions);

    if (!actions || secret_random_hex(jti, 16) != 0) {
        json_decref(actions);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:[{s:s, s:s, s:o}]}", "iss", g->issuer,
                     "sub", g->subject, "aud", g->service, "exp", (json_int_t)(g->now + g->ttl_s),
                     "nbf", (json_int_t)g->now, "iat", (json_int_t)g->now, "jti", jti, "access",
                     "type", g->type ? g->type : "repository", "name", g->repo, "actions", actions);
}

/* header.claims.signature into out, with k's kid. */
static int token_of(EVP_PKEY *k, const struct registry_grant *g, char *out, size_t outlen)
{
    char kid[REGISTRY_KID_SIZE];

    if (kid_of(k, kid) != 0)
        return -1;
    return es256_jwt_sign(k, json_pack("{s:s, s:s, s:s}", "typ", "JWT", "alg", "ES256", "kid", kid),
                          claims(g), out, outlen);
}

int registry_token_sign(const char *pem, const struct registry_grant *g, char *out, size_t outlen)
{
    EVP_PKEY *k = es256_key_load(pem);
    int rc =
        k && g->issuer && g->service && g->subject && g->repo ? token_of(k, g, out, outlen) : -1;

    EVP_PKEY_free(k);
    if (rc != 0 && outlen > 0)
        out[0] = '\0';
    return rc;
}
