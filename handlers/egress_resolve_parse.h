/* egress_resolve_parse.h: what POST /v1/worker/egress-resolve reads (pure:
 * h_egress_resolve.c authenticates, reads the sandbox and answers; decision
 * 0090): the worker's body, and a token's definition in the sandbox's egress
 * policy, "iam": {"tokens": {"<name>": {"audience", "tokenType"}}}.
 * tests/unit/unit_secrets.c. */
#ifndef CORRAL_EGRESS_RESOLVE_PARSE_H
#define CORRAL_EGRESS_RESOLVE_PARSE_H

#include "secret_store.h"

#include <jansson.h>
#include <stddef.h>

#define RESOLVE_NAMES_MAX 16 /* secrets, and tokens, one call names at most */
#define RESOLVE_TOKEN_NAME_MAX 64
#define RESOLVE_SECRET_NAME_MAX 128 /* longer than any secret's: a name may be unknown */
#define RESOLVE_HOST_MAX 254
#define RESOLVE_AUDIENCE_MAX 256

struct resolve_body {
    char sandbox[33], host[RESOLVE_HOST_MAX];
    size_t nsecrets, ntokens;
    char secrets[RESOLVE_NAMES_MAX][RESOLVE_SECRET_NAME_MAX + 1]; /* lower-cased */
    char tokens[RESOLVE_NAMES_MAX][RESOLVE_TOKEN_NAME_MAX + 1];
};

/* {"sandbox": id, "host": name, "secrets": [name...], "tokens": [name...]}:
 * host and the lists optional (host "" when absent), at most
 * RESOLVE_NAMES_MAX names each, a name given twice kept once. A name is
 * what a placeholder may hold (the SDK's rule: no '{', '}' or control
 * character), not necessarily one that exists: the route answers 422 naming
 * an unknown one. Secret names are lower-cased, as they are stored. 0 with
 * b, or -1 with err naming the field. */
int egress_resolve_parse(const json_t *body, struct resolve_body *b, char *err, size_t errlen);

/* The audience of token name as the policy (JSON text of a sandbox record's
 * egress, "" none) defines it, a JWT-SVID. 1 with aud, 0 not defined there
 * (or not as a JWT-SVID with an audience). */
int egress_resolve_token(const char *policy, const char *name, char aud[RESOLVE_AUDIENCE_MAX]);

#endif
