/* The user an Authorization header names (Basic "<user>:"), as the SDK sends
 * it. Pure; tests/envd/unit_basic_auth.c checks it. */
#ifndef ENVD_BASIC_AUTH_PARSE_H
#define ENVD_BASIC_AUTH_PARSE_H

#include <stddef.h>

/* authorization: the header (NULL when absent). "Basic " in any case, then
 * the base64 of "<name>[:<password>]". 1 with the name (up to the first ':'
 * or NUL) in name; 0 when the header is absent, not Basic, or names no one
 * (the caller's default user); -1 when it is not base64 or decodes to namesz
 * bytes or more. */
int basic_auth_user(const char *authorization, char *name, size_t namesz);

#endif
