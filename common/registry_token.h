/* registry_token.h: the bearer tokens Corral's registry trusts (decision
 * 0079, docs/templates.md). The registry (CNCF distribution 2.8) checks a
 * JWT signed with ES256 by the key whose self-signed certificate is its
 * rootcertbundle, found by the header's kid: libtrust's key id of that
 * public key. Pure but for OpenSSL; the key's PEM is passed in, never logged. */
#ifndef CORRAL_REGISTRY_TOKEN_H
#define CORRAL_REGISTRY_TOKEN_H

#include <stddef.h>

#define REGISTRY_KID_SIZE 60 /* 12 groups of 4 base32 characters, 11 ':', NUL */
#define REGISTRY_TOKEN_MAX 2048
#define REGISTRY_TOKEN_TTL_S 300

/* What one token grants: actions on one repository (pull, pull and push for
 * a build; pull and delete for a garbage collection), or on the registry's
 * catalog (type "registry", repo "catalog", actions "*"). */
struct registry_grant {
    const char *issuer;  /* corral.conf registry_issuer: the registry's auth.token.issuer */
    const char *service; /* registry_service: its auth.token.service, the token's aud */
    const char *subject; /* the worker id */
    const char *repo;    /* corral/w<ws>/<tpl> or corral/fleet/<tpl> */
    const char *type;    /* NULL: "repository" */
    const char *actions; /* comma-separated: "pull", "pull,push", "pull,delete", "*" */
    long long now;       /* iat and nbf, seconds since the epoch */
    long ttl_s;          /* exp = now + ttl_s */
};

/* 0 when pem is an EC P-256 private key, else -1. */
int registry_key_check(const char *pem);

/* libtrust's key id of pem's public key: SHA-256 of its DER
 * SubjectPublicKeyInfo, the first 240 bits in base32 without padding, in
 * groups of 4 joined by ':'. 0, or -1 when pem is not such a key. */
int registry_key_id(const char *pem, char kid[REGISTRY_KID_SIZE]);

/* header.claims.signature, base64url, into out. 0, or -1 (not a P-256 key,
 * out too short, OpenSSL or the random source failed). */
int registry_token_sign(const char *pem, const struct registry_grant *g, char *out, size_t outlen);

#endif
