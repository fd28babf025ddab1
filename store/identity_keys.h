/* identity_keys.h: a workspace's workload identity signing keys (decision
 * 0090), the one home of their records. The private key is stored only
 * sealed (env_seal.h) with the associated data "idkey/<ws>/<kid>", so it
 * opens for that workspace and kid alone; its public coordinates are stored
 * as they are (they are published). One key is current (it signs); a key
 * rotated out stays published until the tokens it signed have expired, then
 * is dropped at the next rotation. */
#ifndef CORRAL_IDENTITY_KEYS_H
#define CORRAL_IDENTITY_KEYS_H

#include "rconn.h"

#include <stddef.h>

#define IDKEY_KID_MAX 48
#define IDKEY_COORD_MAX 48
#define IDKEY_PUBLISHED_MAX 16 /* keys one JWKS lists at most */

#define AUDIT_IDENTITY_KEY_ROTATE "identity_key_rotate" /* reason: {"kid", "previous"} */

/* A key's public half as a JWK has it: kid, x, y (base64url). */
struct idkey_public {
    char kid[IDKEY_KID_MAX], x[IDKEY_COORD_MAX], y[IDKEY_COORD_MAX];
};

/* The current key: its public half and its private key's PEM, opened
 * (malloc'd; free with idkey_free). 1, 0 ws has none yet, -1 Redis or it
 * does not open (logged). */
int idkey_current(struct rconn *rc, const char *ws, const char *server_secret,
                  struct idkey_public *pub, char **pem);

/* Makes pub/pem ws's current key. rotate 0: only when ws has none (two
 * first uses racing: one wins, the other reads it back with idkey_current);
 * rotate 1: the current one, if any, is published until retire_until_ms
 * (previous gets its kid, "" none) and keys past their time are dropped.
 * now_ms: what "past" means. 1 installed, 0 not (one was current), -1. */
int idkey_install(struct rconn *rc, const char *ws, const char *server_secret,
                  const struct idkey_public *pub, const char *pem, int rotate,
                  long long retire_until_ms, long long now_ms, char previous[IDKEY_KID_MAX]);

/* The keys to publish at now_ms: the current one first, then the retired
 * ones still in their time, at most IDKEY_PUBLISHED_MAX. 0 (*n may be 0),
 * or -1. */
int idkey_published(struct rconn *rc, const char *ws, long long now_ms,
                    struct idkey_public out[IDKEY_PUBLISHED_MAX], size_t *n);

#endif
