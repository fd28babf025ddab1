#include "env_seal.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEAL_PREFIX "v1."
#define NONCE_LEN 12
#define TAG_LEN 16
#define KEY_LEN 32

/* A key of its own for env vars: HMAC(server secret, label), so the key never
 * equals anything else derived from the secret (credential MACs). */
static void derive_key(const char *server_secret, unsigned char key[KEY_LEN])
{
    static const char label[] = "corral env seal v1";
    unsigned int len = KEY_LEN;

    HMAC(EVP_sha256(), server_secret, (int)strlen(server_secret), (const unsigned char *)label,
         sizeof(label) - 1, key, &len);
}

/* Encrypts (enc = 1) or decrypts in into out (the same length); on decrypt the
 * tag is checked. 0, or -1. */
static int gcm(int enc, const char *server_secret, const char *sbid,
               const unsigned char nonce[NONCE_LEN], const unsigned char *in, int len,
               unsigned char *out, unsigned char tag[TAG_LEN])
{
    unsigned char key[KEY_LEN];
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n = 0, ok;

    derive_key(server_secret, key);
    ok = ctx && EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce, enc) == 1 &&
         EVP_CipherUpdate(ctx, NULL, &n, (const unsigned char *)sbid, (int)strlen(sbid)) == 1 &&
         EVP_CipherUpdate(ctx, out, &n, in, len) == 1 &&
         (enc || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, tag) == 1) &&
         EVP_CipherFinal_ex(ctx, out + n, &n) == 1 &&
         (!enc || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag) == 1);
    EVP_CIPHER_CTX_free(ctx);
    OPENSSL_cleanse(key, sizeof(key));
    return ok ? 0 : -1;
}

char *env_seal(const char *server_secret, const char *sbid, const char *plain)
{
    size_t len = strlen(plain), raw_len = NONCE_LEN + len + TAG_LEN;
    size_t cap = strlen(SEAL_PREFIX) + 4 * ((raw_len + 2) / 3) + 1;
    unsigned char *raw = malloc(raw_len);
    char *out = malloc(cap);

    if (!raw || !out || len > (size_t)1 << 30 || RAND_bytes(raw, NONCE_LEN) != 1 ||
        gcm(1, server_secret, sbid, raw, (const unsigned char *)plain, (int)len, raw + NONCE_LEN,
            raw + NONCE_LEN + len) != 0) {
        free(raw);
        free(out);
        return NULL;
    }
    snprintf(out, cap, "%s", SEAL_PREFIX);
    EVP_EncodeBlock((unsigned char *)out + strlen(SEAL_PREFIX), raw, (int)raw_len);
    free(raw);
    return out;
}

/* Base64 to bytes; the length without the padding, or -1. */
static int unbase64(const char *b64, unsigned char **raw)
{
    size_t len = strlen(b64);
    unsigned char *canon = NULL;
    int n;

    if (len == 0 || len % 4 != 0 || len > (size_t)1 << 30 || !(*raw = malloc(len / 4 * 3 + 1)))
        return -1;
    n = EVP_DecodeBlock(*raw, (const unsigned char *)b64, (int)len);
    if (n < 0) {
        free(*raw);
        *raw = NULL;
        return -1;
    }
    n -= (b64[len - 1] == '=') + (b64[len - 2] == '=');
    /* Only the canonical text: one sealed value has one spelling. */
    if (n < 0 || !(canon = malloc(len + 1)) || EVP_EncodeBlock(canon, *raw, n) != (int)len ||
        memcmp(canon, b64, len) != 0) {
        free(canon);
        free(*raw);
        *raw = NULL;
        return -1;
    }
    free(canon);
    return n;
}

char *env_open(const char *server_secret, const char *sbid, const char *sealed)
{
    unsigned char *raw = NULL;
    char *plain;
    int n, len;

    if (!sealed || strncmp(sealed, SEAL_PREFIX, strlen(SEAL_PREFIX)) != 0)
        return NULL;
    n = unbase64(sealed + strlen(SEAL_PREFIX), &raw);
    len = n - NONCE_LEN - TAG_LEN;
    plain = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!plain || gcm(0, server_secret, sbid, raw, raw + NONCE_LEN, len, (unsigned char *)plain,
                      raw + NONCE_LEN + len) != 0) {
        free(raw);
        free(plain);
        return NULL;
    }
    free(raw);
    plain[len] = '\0';
    /* A NUL inside would cut the text short without anyone noticing. */
    if (strlen(plain) != (size_t)len) {
        free(plain);
        return NULL;
    }
    return plain;
}
