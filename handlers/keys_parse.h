/* keys_parse.h: the bodies of POST /v1/keys ({"role"}) and POST
 * /v1/join-tokens ({"ttl_seconds"}), both optional objects (pure: h_keys.c
 * reads and answers). */
#ifndef CORRAL_KEYS_PARSE_H
#define CORRAL_KEYS_PARSE_H

#include "accounts.h"

#include <jansson.h>
#include <stddef.h>

#define JOINTOKEN_TTL_DEFAULT_S 3600
#define JOINTOKEN_TTL_MIN_S 60
#define JOINTOKEN_TTL_MAX_S (30L * 86400)

/* The new key's role (member when absent). 0, or -1 with err naming the
 * field: an unknown one, or a role that is neither owner nor member. */
int key_create_parse(const json_t *body, enum role *role, char *err, size_t errlen);

/* The join token's life in seconds (an hour when absent). 0, or -1 with err
 * naming the field. */
int jointoken_create_parse(const json_t *body, long *ttl_s, char *err, size_t errlen);

#endif
