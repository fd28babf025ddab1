/* Unit tests of the workload identity's pure parts (decision 0090):
 * base64url, an ECDSA signature from DER to JOSE's r || s, the issuer and
 * trust domain from a Host, a JWT-SVID's claims, and a token signed with a
 * fresh key verified here with OpenSSL against its published x and y (the
 * kid its RFC 7638 thumbprint). No Redis. */
#include "check.h"
#include "jws_es256.h"
#include "identity_jwt.h"
#include "identity_key.h"

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

void unit_identity(int *total_passed, int *total_failed);

static int passed, failed;

static void test_b64url(void)
{
    static const struct {
        const char *in, *want;
    } v[] = {{"", ""},           {"f", "Zg"},         {"fo", "Zm8"},           {"foo", "Zm9v"},
             {"foob", "Zm9vYg"}, {"\xfb\xff", "-_8"}, {"\xff\xfe\xfd", "__79"}};
    char out[16];

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        CHECK(b64url_encode((const unsigned char *)v[i].in, strlen(v[i].in), out, sizeof(out)) ==
                  (int)strlen(v[i].want) &&
              strcmp(out, v[i].want) == 0);
    CHECK(b64url_encode((const unsigned char *)"foo", 3, out, 4) == -1); /* no room for NUL */
    CHECK(b64url_encode((const unsigned char *)"foo", 3, out, 5) == 4);
}

/* base64url back to bytes (test only): the count, or -1. */
static int unb64url(const char *in, unsigned char *out, size_t cap)
{
    size_t n = strlen(in), m = 0;
    unsigned acc = 0;
    int bits = 0;
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    for (size_t i = 0; i < n; i++) {
        const char *p = strchr(alphabet, in[i]);
        if (!p || !in[i])
            return -1;
        acc = (acc << 6) | (unsigned)(p - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (m == cap)
                return -1;
            out[m++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    return (int)m;
}

static void test_der_to_raw(void)
{
    unsigned char raw[64], want[64] = {0};
    /* r = 0x80 01 (a leading 00 in DER: its high bit set), s = 0x05 */
    const unsigned char der[] = {0x30, 0x08, 0x02, 0x03, 0x00, 0x80, 0x01, 0x02, 0x01, 0x05};
    const unsigned char trailing[] = {0x30, 0x08, 0x02, 0x03, 0x00, 0x80,
                                      0x01, 0x02, 0x01, 0x05, 0x00};
    const unsigned char junk[] = {0x02, 0x01, 0x05};

    want[30] = 0x80;
    want[31] = 0x01;
    want[63] = 0x05;
    CHECK(es256_der_to_raw(der, sizeof(der), raw) == 0 && memcmp(raw, want, 64) == 0);
    CHECK(es256_der_to_raw(trailing, sizeof(trailing), raw) == -1);
    CHECK(es256_der_to_raw(junk, sizeof(junk), raw) == -1);
    CHECK(es256_der_to_raw(der, 5, raw) == -1);
}

static void test_issuer(void)
{
    char iss[IDENTITY_ISSUER_MAX], td[IDENTITY_HOST_MAX];

    CHECK(identity_issuer("API.Example.com:8443", "ab12", iss, td) == 0 &&
          strcmp(iss, "https://API.Example.com:8443/identity/ab12") == 0 &&
          strcmp(td, "api.example.com") == 0);
    CHECK(identity_issuer("localhost", "w", iss, td) == 0 &&
          strcmp(iss, "https://localhost/identity/w") == 0 && strcmp(td, "localhost") == 0);
    CHECK(identity_issuer(NULL, "w", iss, td) == -1);
    CHECK(identity_issuer("", "w", iss, td) == -1);
    CHECK(identity_issuer("evil.com/x", "w", iss, td) == -1);
    CHECK(identity_issuer("a@b", "w", iss, td) == -1);
    CHECK(identity_issuer("h:", "w", iss, td) == -1);
    CHECK(identity_issuer("h:80x", "w", iss, td) == -1);
    CHECK(identity_issuer("h:1:2", "w", iss, td) == -1);
    CHECK(identity_issuer(".h", "w", iss, td) == -1);
    CHECK(identity_issuer("[::1]:8443", "w", iss, td) == -1);
}

static void test_claims(void)
{
    struct svid_claims c = {.iss = "https://h/identity/w1",
                            .trust_domain = "h",
                            .ws = "w1",
                            .sandbox = "sb1",
                            .aud = "sts.amazonaws.com",
                            .iat = 1000,
                            .jti = "j1"};
    json_t *j = identity_claims(&c);

    CHECK(j && strcmp(json_string_value(json_object_get(j, "sub")),
                      "spiffe://h/workspace/w1/sandbox/sb1") == 0);
    CHECK(j && json_integer_value(json_object_get(j, "exp")) == 1000 + IDENTITY_TOKEN_TTL_S);
    CHECK(j && json_integer_value(json_object_get(j, "iat")) == 1000);
    CHECK(j && strcmp(json_string_value(json_object_get(j, "aud")), "sts.amazonaws.com") == 0);
    CHECK(j && strcmp(json_string_value(json_object_get(j, "iss")), c.iss) == 0);
    CHECK(j && strcmp(json_string_value(json_object_get(j, "jti")), "j1") == 0);
    json_decref(j);
    c.aud = NULL;
    CHECK(identity_claims(&c) == NULL);
}

/* The public key a JWK's x and y name, as a verifier builds it. */
static EVP_PKEY *from_jwk(const struct idkey_public *pub)
{
    unsigned char point[65] = {0x04};
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *k = NULL;

    if (unb64url(pub->x, point + 1, 32) == 32 && unb64url(pub->y, point + 33, 32) == 32 && b &&
        OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) &&
        OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point)) &&
        (params = OSSL_PARAM_BLD_to_param(b)) && ctx && EVP_PKEY_fromdata_init(ctx) == 1)
        EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, params);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(b);
    EVP_PKEY_CTX_free(ctx);
    return k;
}

/* 1 when token's signature (r || s) over its first two parts verifies with k. */
static int verifies(EVP_PKEY *k, const char *token)
{
    const char *dot2 = strrchr(token, '.');
    unsigned char raw[80], der[80], *p = der;
    ECDSA_SIG *sig = ECDSA_SIG_new();
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int n = dot2 ? unb64url(dot2 + 1, raw, sizeof(raw)) : -1, len, ok = 0;

    if (n == 64 && sig &&
        ECDSA_SIG_set0(sig, BN_bin2bn(raw, 32, NULL), BN_bin2bn(raw + 32, 32, NULL)) == 1 &&
        (len = i2d_ECDSA_SIG(sig, &p)) > 0 && md &&
        EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, k) == 1)
        ok = EVP_DigestVerify(md, der, (size_t)len, (const unsigned char *)token,
                              (size_t)(dot2 - token)) == 1;
    ECDSA_SIG_free(sig);
    EVP_MD_CTX_free(md);
    return ok;
}

/* A part of token (0 header, 1 claims) parsed. */
static json_t *part(const char *token, int which)
{
    char buf[2048];
    unsigned char bytes[2048];
    const char *start = which ? strchr(token, '.') + 1 : token;
    size_t n = strcspn(start, ".");
    int m;

    memcpy(buf, start, n);
    buf[n] = '\0';
    m = unb64url(buf, bytes, sizeof(bytes) - 1);
    return m < 0 ? NULL : json_loadb((const char *)bytes, (size_t)m, 0, NULL);
}

static void test_sign(void)
{
    char *pem = identity_key_generate(), *other = identity_key_generate(), jwt[IDENTITY_JWT_MAX],
         jwk[200], kid[48];
    struct idkey_public pub, pub2;
    struct svid_claims c = {.iss = "https://h/identity/w1",
                            .trust_domain = "h",
                            .ws = "w1",
                            .sandbox = "sb1",
                            .aud = "aud1",
                            .iat = 1000,
                            .jti = "j"};
    unsigned char hash[SHA256_DIGEST_LENGTH];
    EVP_PKEY *k, *k2;
    json_t *h, *cl;

    CHECK(pem && other && identity_key_public(pem, &pub) == 0 &&
          identity_key_public(other, &pub2) == 0);
    CHECK(strlen(pub.x) == 43 && strlen(pub.y) == 43 && strlen(pub.kid) == 43);
    snprintf(jwk, sizeof(jwk), "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}",
             pub.x, pub.y);
    SHA256((const unsigned char *)jwk, strlen(jwk), hash);
    b64url_encode(hash, sizeof(hash), kid, sizeof(kid));
    CHECK(strcmp(kid, pub.kid) == 0 && strcmp(pub.kid, pub2.kid) != 0);
    CHECK(identity_jwt_sign(pem, pub.kid, identity_claims(&c), jwt, sizeof(jwt)) == 0);
    k = from_jwk(&pub);
    k2 = from_jwk(&pub2);
    CHECK(k && k2 && verifies(k, jwt) && !verifies(k2, jwt));
    h = part(jwt, 0);
    cl = part(jwt, 1);
    CHECK(h && strcmp(json_string_value(json_object_get(h, "alg")), "ES256") == 0 &&
          strcmp(json_string_value(json_object_get(h, "typ")), "JWT") == 0 &&
          strcmp(json_string_value(json_object_get(h, "kid")), pub.kid) == 0);
    CHECK(cl && json_integer_value(json_object_get(cl, "exp")) == 1300);
    jwt[strlen(jwt) - 2] ^= 1; /* altered: no longer verifies */
    CHECK(k && !verifies(k, jwt));
    CHECK(identity_jwt_sign("not a key", pub.kid, identity_claims(&c), jwt, sizeof(jwt)) == -1 &&
          jwt[0] == '\0');
    CHECK(identity_jwt_sign(pem, pub.kid, identity_claims(&c), jwt, 40) == -1);
    CHECK(identity_key_public("junk", &pub) == -1);
    json_decref(h);
    json_decref(cl);
    EVP_PKEY_free(k);
    EVP_PKEY_free(k2);
    free(pem);
    free(other);
}

void unit_identity(int *total_passed, int *total_failed)
{
    test_b64url();
    test_der_to_raw();
    test_issuer();
    test_claims();
    test_sign();
    printf("unit_identity: %d passed, %d failed\n", passed, failed);
    *total_passed += passed;
    *total_failed += failed;
}
