/* A workspace's identity key pair (identity_key.h). */
#include "identity_key.h"

#include "identity_jwt.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COORD 32

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

/* An encrypted key is refused, never prompted for. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

EVP_PKEY *identity_key_load(const char *pem)
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

/* One coordinate of k, base64url of its 32 big-endian bytes. 0, or -1. */
static int coord(EVP_PKEY *k, const char *param, char out[IDKEY_COORD_MAX])
{
    BIGNUM *bn = NULL;
    unsigned char raw[COORD];
    int rc = -1;

    if (EVP_PKEY_get_bn_param(k, param, &bn) == 1 && BN_bn2binpad(bn, raw, COORD) == COORD &&
        identity_b64url(raw, COORD, out, IDKEY_COORD_MAX) > 0)
        rc = 0;
    BN_free(bn);
    return rc;
}

int identity_key_public(const char *pem, struct idkey_public *out)
{
    EVP_PKEY *k = identity_key_load(pem);
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
        rc = identity_b64url(hash, sizeof(hash), out->kid, sizeof(out->kid)) > 0 ? 0 : -1;
    }
    EVP_PKEY_free(k);
    return rc;
}
