/* registry_token.c: ES256 JWTs for the distribution registry's token auth. */
#include "registry_token.h"

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
#define COORD 32     /* r and s of a P-256 signature, each */

/* An encrypted key is refused, never prompted for. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* pem's private key when it is on P-256, else NULL. */
static EVP_PKEY *key_load(const char *pem)
{
    BIO *bio = pem ? BIO_new_mem_buf(pem, -1) : NULL;
    EVP_PKEY *k = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    char group[64] = "";

    BIO_free(bio);
    if (k && (EVP_PKEY_get_base_id(k) != EVP_PKEY_EC ||
              EVP_PKEY_get_group_name(k, group, sizeof(group), NULL) != 1 ||
              strcmp(group, SN_X9_62_prime256v1) != 0)) {
        EVP_PKEY_free(k);
        k = NULL;
    }
    return k;
}

int registry_key_check(const char *pem)
{
    EVP_PKEY *k = key_load(pem);

    EVP_PKEY_free(k);
    return k ? 0 : -1;
}

/* base64url without padding of in, at out; its length, or -1 when out is short. */
static int b64url(const unsigned char *in, size_t n, char *out, size_t outlen)
{
    size_t need = 4 * ((n + 2) / 3) + 1;
    int len;

    if (n > (size_t)1 << 20 || outlen < need)
        return -1;
    len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);
    while (len > 0 && out[len - 1] == '=')
        len--;
    out[len] = '\0';
    for (char *p = out; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    return len;
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
    EVP_PKEY *k = key_load(pem);
    int rc = k ? kid_of(k, kid) : -1;

    EVP_PKEY_free(k);
    return rc;
}

/* The JSON of part as base64url at out; its length, or -1. */
static int b64url_json(json_t *part, char *out, size_t outlen)
{
    char *text = part ? json_dumps(part, JSON_COMPACT) : NULL;
    int n = text ? b64url((const unsigned char *)text, strlen(text), out, outlen) : -1;

    free(text);
    json_decref(part);
    return n;
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

/* ES256 over msg: JOSE wants r || s, each 32 bytes, not OpenSSL's DER. */
static int es256(EVP_PKEY *k, const char *msg, unsigned char sig[2 * COORD])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char der[128];
    const unsigned char *p = der;
    size_t n = sizeof(der);
    ECDSA_SIG *s = NULL;
    const BIGNUM *r, *sv;
    int rc = -1;

    if (md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, k) == 1 &&
        EVP_DigestSign(md, der, &n, (const unsigned char *)msg, strlen(msg)) == 1 &&
        (s = d2i_ECDSA_SIG(NULL, &p, (long)n)) != NULL) {
        ECDSA_SIG_get0(s, &r, &sv);
        if (BN_bn2binpad(r, sig, COORD) == COORD && BN_bn2binpad(sv, sig + COORD, COORD) == COORD)
            rc = 0;
    }
    ECDSA_SIG_free(s);
    EVP_MD_CTX_free(md);
    return rc;
}

/* header.claims.signature into out, with k's kid. */
static int token_of(EVP_PKEY *k, const struct registry_grant *g, char *out, size_t outlen)
{
    char kid[REGISTRY_KID_SIZE];
    unsigned char sig[2 * COORD];
    int h, c, s;

    if (kid_of(k, kid) != 0)
        return -1;
    h = b64url_json(json_pack("{s:s, s:s, s:s}", "typ", "JWT", "alg", "ES256", "kid", kid), out,
                    outlen);
    if (h < 0 || (size_t)h + 2 >= outlen)
        return -1;
    out[h] = '.';
    c = b64url_json(claims(g), out + h + 1, outlen - (size_t)h - 1);
    if (c < 0 || (size_t)(h + c) + 3 >= outlen || es256(k, out, sig) != 0)
        return -1;
    out[h + 1 + c] = '.';
    s = b64url(sig, sizeof(sig), out + h + c + 2, outlen - (size_t)(h + c) - 2);
    return s < 0 ? -1 : 0;
}

int registry_token_sign(const char *pem, const struct registry_grant *g, char *out, size_t outlen)
{
    EVP_PKEY *k = key_load(pem);
    int rc =
        k && g->issuer && g->service && g->subject && g->repo ? token_of(k, g, out, outlen) : -1;

    EVP_PKEY_free(k);
    if (rc != 0 && outlen > 0)
        out[0] = '\0';
    return rc;
}
