#include "jws_es256.h"

#include <openssl/ec.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>

static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

EVP_PKEY *es256_key_load(const char *pem)
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

int b64url_encode(const unsigned char *in, size_t n, char *out, size_t outlen)
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

int es256_der_to_raw(const unsigned char *der, size_t n, unsigned char raw[2 * ES256_COORD])
{
    const unsigned char *p = der;
    ECDSA_SIG *s = n < 128 ? d2i_ECDSA_SIG(NULL, &p, (long)n) : NULL;
    const BIGNUM *r, *sv;
    int rc = -1;

    if (s && p == der + n) {
        ECDSA_SIG_get0(s, &r, &sv);
        if (BN_bn2binpad(r, raw, ES256_COORD) == ES256_COORD &&
            BN_bn2binpad(sv, raw + ES256_COORD, ES256_COORD) == ES256_COORD)
            rc = 0;
    }
    ECDSA_SIG_free(s);
    return rc;
}

/* The JSON of part as base64url at out; its length, or -1. Takes part. */
static int b64url_json(json_t *part, char *out, size_t outlen)
{
    char *text = part ? json_dumps(part, JSON_COMPACT) : NULL;
    int n = text ? b64url_encode((const unsigned char *)text, strlen(text), out, outlen) : -1;

    free(text);
    json_decref(part);
    return n;
}

static int sign(EVP_PKEY *k, const char *msg, unsigned char sig[2 * ES256_COORD])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char der[128];
    size_t n = sizeof(der);
    int rc = -1;

    if (md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, k) == 1 &&
        EVP_DigestSign(md, der, &n, (const unsigned char *)msg, strlen(msg)) == 1)
        rc = es256_der_to_raw(der, n, sig);
    EVP_MD_CTX_free(md);
    return rc;
}

int es256_jwt_sign(EVP_PKEY *k, json_t *header, json_t *claims, char *out, size_t outlen)
{
    unsigned char sig[2 * ES256_COORD];
    int h = b64url_json(header, out, outlen), c = -1, s = -1;

    if (h >= 0 && (size_t)h + 2 < outlen) {
        out[h] = '.';
        c = b64url_json(claims, out + h + 1, outlen - (size_t)h - 1);
        claims = NULL;
    }
    if (k && c >= 0 && (size_t)(h + c) + 3 < outlen && sign(k, out, sig) == 0) {
        out[h + 1 + c] = '.';
        s = b64url_encode(sig, sizeof(sig), out + h + c + 2, outlen - (size_t)(h + c) - 2);
    }
    json_decref(claims);
    if (s < 0 && outlen > 0)
        out[0] = '\0';
    return s < 0 ? -1 : 0;
}
