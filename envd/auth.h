/* The envd access token of a secure sandbox: header checks and signed file URLs. */
#ifndef ENVD_AUTH_H
#define ENVD_AUTH_H

#include <stddef.h>

#include "http.h"

/* a and b equal, compared in constant time (of their SHA-256 digests). */
int auth_secret_equal(const char *a, size_t alen, const char *b, size_t blen);

/* True when no token is configured or X-Access-Token equals it (constant time). */
int auth_token_ok(const struct http_req *r);

/*
 * For GET/POST /files: a matching X-Access-Token, or a valid
 * signature=v1_<base64 sha256("path:op:user:token[:expiry]")>. An expiry must be
 * decimal seconds, not past, and at most AUTH_SIGNATURE_MAX_WINDOW_S (auth_parse.h) ahead; an
 * absent one is accepted (E2B's SDK default) unless the operator requires one
 * (-signature-expiration required). 0 ok; -1 with msg filled.
 */
int auth_check_file_access(const struct http_req *r, const char *path, const char *operation,
                           const char *username, char *msg, size_t msgsz);

#endif
