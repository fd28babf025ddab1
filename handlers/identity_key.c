/* A workspace's identity key pair (identity_key.h). */
#include "identity_key.h"

#include "identity_jwt.h"
#include "jws_es256.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COORD ES256_COORD

char *identity_key_generate(void)
{
    EVP_PKEY *k = EVP_EC_gen(SN_X9_62_prime256v1);
    BIO *bio = k ? BIO_new(BIO_s_mem()) : NULL;
    char *data = NULL, *pem = NULL;
    long n;

    if (bio && PEM_write_bio_PrivateKey(bio, k, NULL, NULL, 0, NULL, NULL) == 1 &&
        (n = BIO_get_mem_data(bio, &data)) > 0 && (pem = malloc((size_t)n + 1)) != NULL) {
        memcpy(pem, data, (size_t)n);
        pem[n] = '\0';
    }
    BIO_free(bio);
    EVP_PKEY_free(k);
    return pem;
}

/* One coordinate of k, base64url of its 32 big-endian bytes. 0, or -1. */
static int coord(EVP_PKEY *k, const char *param, char out[IDKEY_COORD_MAX])
{
    BIGNUM *bn = NULL;
    unsigned char raw[COORD];
    int rc = -1;

    if (EVP_PKEY_get_bn_param(k, param, &bn) == 1 && BN_bn2binpad(bn, raw, COORD) == COORD &&
        b64url_encode(raw, COORD, out, IDKEY_COORD_MAX) > 0)
        rc = 0;
    BN_free(bn);
    return rc;
}

int identity_key_public(const char *pem, struct idkey_public *out)
{
    EVP_PKEY *k = es256_key_load(pem);
    char jwk[160];
    unsigned char hash[SHA256_DIGEST_LENGTH];
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (k && coord(k, OSSL_PKEY_PARAM_EC_PUB_X, out->x) == 0 &&
        coord(k, OSSL_PKEY_PARAM_EC_PUB_Y, out->y) == 0) {
        /* RFC 7638: the required members, sorted, no whitespace. */
        snprintf(jwk, sizeof(jwk), "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}",
                 out->x, out->y);
        SHA256((const unsigned char *)jwk, strlen(jwk), hash);
        rc = b64url_encode(hash, sizeof(hash), out->kid, sizeof(out->kid)) > 0 ? 0 : -1;
    }
    EVP_PKEY_free(k);
    return rc;
}
