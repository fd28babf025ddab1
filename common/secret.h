/* secret.h: random identifiers and secrets, keyed hashes, constant-time compare.
 * Secrets are stored only as HMAC-SHA-256 under the server secret, so a dump of
 * Redis does not hand out working credentials. */
#ifndef CORRAL_SECRET_H
#define CORRAL_SECRET_H

#include <stddef.h>

#define SECRET_MAC_HEX 65 /* 64 hex digits and NUL */

/* Writes 2*nbytes lowercase hex digits and a NUL into out. 0, or -1 if the
 * system's random source failed. */
int secret_random_hex(char *out, size_t nbytes);

/* out = hex(HMAC-SHA-256(key, msg)). */
void secret_mac_hex(const char *key, const char *msg, char out[SECRET_MAC_HEX]);

/* 1 when equal; time depends only on the length of b. */
int secret_equal(const char *a, const char *b);

/* Reads a file only its owner may read (a secret, a join token) into out,
 * trailing newlines and spaces cut. 0, or -1 with err naming the file and why,
 * never what it holds. */
int secret_read_file(const char *path, char *out, size_t outlen, char *err, size_t errlen);

/* Loads the server secret from a file (at least 32 characters, not readable by
 * group or others). 0, or -1 with err set. */
int secret_load_file(const char *path, char *out, size_t outlen, char *err, size_t errlen);

#endif
