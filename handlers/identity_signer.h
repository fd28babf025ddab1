/* identity_signer.h: a workspace's signing key as the routes need it
 * (decision 0090): made on first use, rotated by its owner, and a sandbox's
 * token minted with it. The key's record is store/identity_keys.h's. */
#ifndef CORRAL_IDENTITY_SIGNER_H
#define CORRAL_IDENTITY_SIGNER_H

#include "identity_keys.h"
#include "rconn.h"

#include <stddef.h>

/* ws's current key, made (and recorded) when it has none: its public half
 * and its private PEM (malloc'd; the caller frees it). 0, or -1. */
int identity_signing_key(struct rconn *rc, const char *ws, const char *server_secret,
                         struct idkey_public *pub, char **pem);

/* A new current key; the one it replaces stays published until now_ms plus
 * a token's life. pub: the new key's; previous: the old kid ("" none). 0,
 * or -1. */
int identity_rotate(struct rconn *rc, const char *ws, const char *server_secret, long long now_ms,
                    struct idkey_public *pub, char previous[IDKEY_KID_MAX]);

/* A JWT-SVID for sandbox sbid of ws, for aud, issued by https://<host>/identity/<ws>
 * at now_s, at out. 0, -1 (store, key or OpenSSL), -2 host is not a name. */
int identity_mint(struct rconn *rc, const char *server_secret, const char *host, const char *ws,
                  const char *sbid, const char *aud, long long now_s, char *out, size_t outlen);

#endif
