/*
 * Token comparisons hash both sides first and compare the digests with
 * CRYPTO_memcmp, so neither the content nor the length of the token leaks
 * through timing.
 */
#include "auth.h"
#include "auth_parse.h"
#include "base64.h"
#include "envd.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int sha256(const void *data, size_t len, unsigned char out[32])
{
    unsigned int n = 0;

    return EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) == 1 && n == 32 ? 0 : -1;
}

int auth_secret_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char da[32], db[32];

    if (sha256(a, alen, da) < 0 || sha256(b, blen, db) < 0)
        return 0;
    return CRYPTO_memcmp(da, db, 32) == 0;
}

int auth_token_ok(const struct http_req *r)
{
    const char *h;

    if (envd_cfg.access_token == NULL)
        return 1;
    h = http_header(r, "X-Access-Token");
    return h != NULL &&
           auth_secret_equal(h, strlen(h), envd_cfg.access_token, envd_cfg.access_token_len);
}

static int expected_signature(const char *path, const char *operation, const char *username,
                              const char *expiration, char *out, size_t outsz)
{
    size_t need = strlen(path) + strlen(operation) + strlen(username) + envd_cfg.access_token_len +
                  (expiration ? strlen(expiration) : 0) + 8;
    char *raw = malloc(need);
    unsigned char digest[32];
    int n;

    if (raw == NULL || outsz < 3 + 44 + 1) {
        free(raw);
        return -1;
    }
    n = snprintf(raw, need, "%s:%s:%s:%s%s%s", path, operation, username, envd_cfg.access_token,
                 expiration ? ":" : "", expiration ? expiration : "");
    if (n < 0 || sha256(raw, (size_t)n, digest) < 0) {
        OPENSSL_cleanse(raw, need);
        free(raw);
        return -1;
    }
    OPENSSL_cleanse(raw, need);
    free(raw);
    memcpy(out, "v1_", 3); /* NOLINT(bugprone-not-null-terminated-result): terminated below */
    base64_encode_nopad(digest, sizeof(digest), out + 3);
    return 0;
}

int auth_check_file_access(const struct http_req *r, const char *path, const char *operation,
                           const char *username, char *msg, size_t msgsz)
{
    char signature[256], expiration[32], expected[64];
    const char *header;
    int has_exp;

    if (envd_cfg.access_token == NULL)
        return 0;
    header = http_header(r, "X-Access-Token");
    if (header != NULL) {
        if (auth_token_ok(r))
            return 0;
        snprintf(msg, msgsz, "access token present in header but does not match");
        return -1;
    }
    if (http_query_param(r, "signature", signature, sizeof(signature)) != 1) {
        snprintf(msg, msgsz, "missing signature query parameter");
        return -1;
    }
    has_exp = http_query_param(r, "signature_expiration", expiration, sizeof(expiration));
    if (has_exp < 0) {
        snprintf(msg, msgsz, AUTH_EXPIRATION_NOT_DECIMAL);
        return -1;
    }
    if (expected_signature(path, operation, username, has_exp ? expiration : NULL, expected,
                           sizeof(expected)) < 0 ||
        !auth_secret_equal(signature, strlen(signature), expected, strlen(expected))) {
        snprintf(msg, msgsz, "invalid signature");
        return -1;
    }
    return auth_expiration_check(has_exp ? expiration : NULL, envd_cfg.require_signature_expiration,
                                 (long long)time(NULL), msg, msgsz);
}
