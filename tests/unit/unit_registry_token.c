/* Unit tests of common/registry_token.c: for a fixed test key, the kid is
 * the one the openssl and coreutils command line computes (libtrust's key
 * id), the signature verifies with OpenSSL over header.claims, the header
 * and claims say what the registry checks, and keys that are not EC P-256
 * private keys are refused. tests/registry/run.sh puts the same tokens
 * before a real registry. */
#include "check.h"
#include "registry_token.h"

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void unit_registry_token(int *total_passed, int *total_failed);

static int passed, failed;

/* A throwaway key made for this test only. */
static const char test_key[] = "-----BEGIN EC PRIVATE KEY-----\n"
                               "MHcCAQEEIMzdXtuBnzbkgjvq6SO/P1bPqODPdvv9SryM8AkcPyiSoAoGCCqGSM49\n"
                               "AwEHoUQDQgAEmVIrYDKEbMgbswg42Q4hmHGU0hVtj3mZLbXoSnsCAlYqM5P+YQww\n"
                               "tdIbFWt8Uj/v0zzkBcgwXcD8k6pROSJthA==\n"
                               "-----END EC PRIVATE KEY-----\n";

static const char p384_key[] = "-----BEGIN EC PRIVATE KEY-----\n"
                               "MIGkAgEBBDBK/dwUvecktVlHxR+ae+sd2zf3KbfHSdNNXz36WCqDLM9vr/jZtx5q\n"
                               "ImgvDLM/SxGgBwYFK4EEACKhZANiAARH9N/omApbsQvuk6JiuYsuG1o1flQ2BnFw\n"
                               "4iHMxOzQTZ5Z1xJSvjBP3dE/8HXfAiGz98v6+0CFXNL5iHPkMiY/2Hv5oY5TlROR\n"
                               "fupjJxWI2I66kdz8mDTdF4hr9NHXtp8=\n"
                               "-----END EC PRIVATE KEY-----\n";

static const char ed25519_key[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEILzlClM5JXeu+dKsgfnhp3wICDVCUcLHcby3iId2nclX\n"
    "-----END PRIVATE KEY-----\n";

/* The kid as the command line computes it from test_key, or "" when it
 * could not run. */
static void cli_kid(char *out, size_t len)
{
    char path[] = "/tmp/unit-regkey-XXXXXX", cmd[512];
    int fd = mkstemp(path);
    FILE *p;

    out[0] = '\0';
    if (fd < 0)
        return;
    if (write(fd, test_key, strlen(test_key)) == (ssize_t)strlen(test_key)) {
        snprintf(cmd, sizeof(cmd),
                 "openssl pkey -in %s -pubout -outform DER | openssl dgst -sha256 -binary | "
                 "head -c 30 | base32 | tr -d '=\\n' | sed 's/..../&:/g; s/:$//'",
                 path);
        p = popen(cmd, "r");
        if (p) {
            if (!fgets(out, (int)len, p))
                out[0] = '\0';
            pclose(p);
        }
    }
    close(fd);
    unlink(path);
    out[strcspn(out, "\n")] = '\0';
}

/* base64url (no padding) to bytes; the length, or -1. */
static int unb64url(const char *in, size_t n, unsigned char *out, size_t outlen)
{
    char buf[2048];
    size_t padded = (n + 3) / 4 * 4;
    int len;

    if (padded + 1 > sizeof(buf) || padded / 4 * 3 > outlen)
        return -1;
    for (size_t i = 0; i < padded; i++)
        buf[i] = i >= n ? '=' : in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
    buf[padded] = '\0';
    len = EVP_DecodeBlock(out, (unsigned char *)buf, (int)padded);
    return len < 0 ? -1 : len - (int)(padded - n);
}

static json_t *part_json(const char *b64, size_t n)
{
    unsigned char raw[1536];
    int len = unb64url(b64, n, raw, sizeof(raw) - 1);

    return len < 0 ? NULL : json_loadb((const char *)raw, (size_t)len, 0, NULL);
}

/* 1 when sig (r || s, base64url) is test_key's ES256 over msg[0, n). */
static int verifies(const char *msg, size_t n, const char *sig64)
{
    unsigned char rs[96], der[128], *p = der;
    BIO *bio = BIO_new_mem_buf(test_key, -1);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    ECDSA_SIG *s = ECDSA_SIG_new();
    int ok = 0, dlen;

    if (k && md && s && unb64url(sig64, strlen(sig64), rs, sizeof(rs)) == 64 &&
        ECDSA_SIG_set0(s, BN_bin2bn(rs, 32, NULL), BN_bin2bn(rs + 32, 32, NULL)) == 1 &&
        (dlen = i2d_ECDSA_SIG(s, &p)) > 0 &&
        EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, k) == 1)
        ok = EVP_DigestVerify(md, der, (size_t)dlen, (const unsigned char *)msg, n) == 1;
    ECDSA_SIG_free(s);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(k);
    BIO_free(bio);
    return ok;
}

static int action_list(const json_t *claims, const char *want)
{
    json_t *a = json_object_get(json_array_get(json_object_get(claims, "access"), 0), "actions");
    char *text = json_dumps(a, JSON_COMPACT);
    int ok = text && strcmp(text, want) == 0;

    free(text);
    return ok;
}

static void test_kid(void)
{
    char kid[REGISTRY_KID_SIZE], cli[128];

    CHECK(registry_key_id(test_key, kid) == 0 && strlen(kid) == 59);
    cli_kid(cli, sizeof(cli));
    CHECK(cli[0] != '\0');
    if (strcmp(kid, cli) != 0)
        fprintf(stderr, "  kid \"%s\", openssl's \"%s\"\n", kid, cli);
    CHECK(strcmp(kid, cli) == 0);
    for (int i = 4; i < 59; i += 5)
        CHECK(kid[i] == ':');
}

static void test_claims(const char *token, const char *kid, int push)
{
    const char *d1 = strchr(token, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    json_t *h = d1 ? part_json(token, (size_t)(d1 - token)) : NULL;
    json_t *c = d2 ? part_json(d1 + 1, (size_t)(d2 - d1 - 1)) : NULL;
    json_t *acc = json_array_get(json_object_get(c, "access"), 0);

    CHECK(d2 && !strchr(token, '=') && !strchr(token, '+') && !strchr(token, '/'));
    CHECK(d2 && verifies(token, (size_t)(d2 - token), d2 + 1));
    CHECK(json_object_size(h) == 3 &&
          !strcmp(json_string_value(json_object_get(h, "alg")), "ES256") &&
          !strcmp(json_string_value(json_object_get(h, "typ")), "JWT") &&
          !strcmp(json_string_value(json_object_get(h, "kid")), kid));
    CHECK(!strcmp(json_string_value(json_object_get(c, "iss")), "corral") &&
          !strcmp(json_string_value(json_object_get(c, "sub")), "0123abcd") &&
          !strcmp(json_string_value(json_object_get(c, "aud")), "corral-registry"));
    CHECK(json_integer_value(json_object_get(c, "iat")) == 1700000000 &&
          json_integer_value(json_object_get(c, "nbf")) == 1700000000 &&
          json_integer_value(json_object_get(c, "exp")) == 1700000300);
    CHECK(json_string_length(json_object_get(c, "jti")) == 32);
    CHECK(json_array_size(json_object_get(c, "access")) == 1 &&
          !strcmp(json_string_value(json_object_get(acc, "type")), "repository") &&
          !strcmp(json_string_value(json_object_get(acc, "name")), "corral/fleet/tpl-base"));
    CHECK(action_list(c, push ? "[\"pull\",\"push\"]" : "[\"pull\"]"));
    json_decref(h);
    json_decref(c);
}

static void test_sign(void)
{
    char kid[REGISTRY_KID_SIZE], a[REGISTRY_TOKEN_MAX], b[REGISTRY_TOKEN_MAX], small[100];
    struct registry_grant g = {.issuer = "corral",
                               .service = "corral-registry",
                               .subject = "0123abcd",
                               .repo = "corral/fleet/tpl-base",
                               .actions = "pull",
                               .now = 1700000000,
                               .ttl_s = 300};

    CHECK(registry_key_id(test_key, kid) == 0);
    CHECK(registry_token_sign(test_key, &g, a, sizeof(a)) == 0);
    test_claims(a, kid, 0);
    g.actions = "pull,push";
    CHECK(registry_token_sign(test_key, &g, b, sizeof(b)) == 0);
    test_claims(b, kid, 1);
    /* every token its own (jti, and ECDSA's random k) */
    g.actions = "pull";
    CHECK(registry_token_sign(test_key, &g, b, sizeof(b)) == 0 && strcmp(a, b) != 0);
    /* a buffer too short: refused, emptied */
    CHECK(registry_token_sign(test_key, &g, small, sizeof(small)) == -1 && small[0] == '\0');
    g.repo = NULL;
    CHECK(registry_token_sign(test_key, &g, b, sizeof(b)) == -1 && b[0] == '\0');
}

/* The control plane's own calls (decision 0081): a delete on one repository,
 * and the catalog. */
static void test_scopes(void)
{
    char t[REGISTRY_TOKEN_MAX];
    struct registry_grant g = {.issuer = "corral",
                               .service = "corral-registry",
                               .subject = "corral-api",
                               .repo = "corral/w0123456789abcdef/tpl-a",
                               .actions = "pull,delete",
                               .now = 1700000000,
                               .ttl_s = 60};
    json_t *c, *acc;
    const char *d1, *d2;

    CHECK(registry_token_sign(test_key, &g, t, sizeof(t)) == 0);
    d1 = strchr(t, '.');
    d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    c = d2 ? part_json(d1 + 1, (size_t)(d2 - d1 - 1)) : NULL;
    CHECK(action_list(c, "[\"pull\",\"delete\"]"));
    json_decref(c);
    g.type = "registry";
    g.repo = "catalog";
    g.actions = "*";
    CHECK(registry_token_sign(test_key, &g, t, sizeof(t)) == 0);
    d1 = strchr(t, '.');
    d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    c = d2 ? part_json(d1 + 1, (size_t)(d2 - d1 - 1)) : NULL;
    acc = json_array_get(json_object_get(c, "access"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(acc, "type")), "registry") &&
          !strcmp(json_string_value(json_object_get(acc, "name")), "catalog") &&
          action_list(c, "[\"*\"]"));
    json_decref(c);
}

static void test_bad_keys(void)
{
    char kid[REGISTRY_KID_SIZE], out[REGISTRY_TOKEN_MAX];
    struct registry_grant g = {.issuer = "corral",
                               .service = "corral-registry",
                               .subject = "w",
                               .repo = "corral/fleet/tpl-base",
                               .actions = "pull",
                               .now = 1,
                               .ttl_s = 300};

    CHECK(registry_key_check(test_key) == 0);
    CHECK(registry_key_check(p384_key) == -1 && registry_key_id(p384_key, kid) == -1);
    CHECK(registry_key_check(ed25519_key) == -1);
    CHECK(registry_key_check("") == -1 && registry_key_check(NULL) == -1);
    CHECK(registry_key_check(
              "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n") == -1);
    CHECK(registry_token_sign(p384_key, &g, out, sizeof(out)) == -1 && out[0] == '\0');
}

void unit_registry_token(int *total_passed, int *total_failed)
{
    test_kid();
    test_sign();
    test_scopes();
    test_bad_keys();
    *total_passed += passed;
    *total_failed += failed;
}
