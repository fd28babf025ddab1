/* env_seal.h: a sandbox's env vars encrypted at rest (decision 0031).
 *
 * Env vars are users' secrets. They sit in Redis (the sandbox record and the
 * create command on the worker's stream) only sealed: AES-256-GCM under a key
 * derived from the server secret, with the sandbox id as associated data, so a
 * sealed value copied onto another sandbox does not open. The heartbeat opens
 * it just before the command goes to the worker over TLS.
 *
 * Sealed text: "v1." then base64 of nonce (12 bytes) | ciphertext | tag (16). */
#ifndef CORRAL_ENV_SEAL_H
#define CORRAL_ENV_SEAL_H

#include <stddef.h>

/* Sealed text of plain (a NUL-terminated string) bound to sbid, malloc'd;
 * NULL if the random source or the cipher failed. */
char *env_seal(const char *server_secret, const char *sbid, const char *plain);

/* The plain text (malloc'd), or NULL when sealed is malformed, was sealed
 * under another secret or for another sandbox, or was altered. */
char *env_open(const char *server_secret, const char *sbid, const char *sealed);

#endif
