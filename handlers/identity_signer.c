/* A workspace's signing key, made, rotated and used (identity_signer.h). */
#include "identity_signer.h"

#include "identity_jwt.h"
#include "identity_key.h"
#include "secret.h"

#include <stdlib.h>
#include <string.h>

/* A new key pair: its PEM (malloc'd) and public half; NULL on failure. */
static char *new_key(struct idkey_public *pub)
{
    char *pem = identity_key_generate();

    if (pem && identity_key_public(pem, pub) != 0) {
        free(pem);
        pem = NULL;
    }
    return pem;
}

int identity_signing_key(struct rconn *rc, const char *ws, const char *server_secret,
                         struct idkey_public *pub, char **pem)
{
    char previous[IDKEY_KID_MAX], *made;
    struct idkey_public fresh;
    int found = idkey_current(rc, ws, server_secret, pub, pem);

    if (found != 0)
        return found == 1 ? 0 : -1;
    if (!(made = new_key(&fresh)))
        return -1;
    /* Two first uses may race: whichever installed first is the key. */
    found = idkey_install(rc, ws, server_secret, &fresh, made, 0, 0, 0, previous);
    free(made);
    if (found < 0)
        return -1;
    return idkey_current(rc, ws, server_secret, pub, pem) == 1 ? 0 : -1;
}

int identity_rotate(struct rconn *rc, const char *ws, const char *server_secret, long long now_ms,
                    struct idkey_public *pub, char previous[IDKEY_KID_MAX])
{
    char *made = new_key(pub);
    int installed;

    previous[0] = '\0';
    if (!made)
        return -1;
    installed = idkey_install(rc, ws, server_secret, pub, made, 1,
                              now_ms + IDENTITY_TOKEN_TTL_S * 1000LL, now_ms, previous);
    free(made);
    return installed == 1 ? 0 : -1;
}

int identity_mint(struct rconn *rc, const char *server_secret, const char *host, const char *ws,
                  const char *sbid, const char *aud, long long now_s, char *out, size_t outlen)
{
    char iss[IDENTITY_ISSUER_MAX], td[IDENTITY_HOST_MAX], jti[33], *pem = NULL;
    struct idkey_public pub;
    int made;

    if (identity_issuer(host, ws, iss, td) != 0)
        return -2;
    if (secret_random_hex(jti, 16) != 0 ||
        identity_signing_key(rc, ws, server_secret, &pub, &pem) != 0)
        return -1;
    struct svid_claims c = {.iss = iss,
                            .trust_domain = td,
                            .ws = ws,
                            .sandbox = sbid,
                            .aud = aud,
                            .iat = now_s,
                            .jti = jti};
    made = identity_jwt_sign(pem, pub.kid, identity_claims(&c), out, outlen);
    explicit_bzero(pem, strlen(pem));
    free(pem);
    return made;
}
