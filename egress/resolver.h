/* resolver.h: the values behind a request's placeholders, asked of the
 * resolver (workerd) on its unix socket, once per request: one JSON line
 *   {"host":"api.example.com","secrets":["a"],"tokens":["aws"]}
 * answered by one JSON line
 *   {"secrets":{"a":"..."},"tokens":{"aws":"..."}}  or  {"error":"text"}
 * within RESOLVER_TIMEOUT_MS. Values are never logged nor shown; neither is
 * the resolver's error text (it is not ours to vouch for). */
#ifndef CORRAL_EGRESS_RESOLVER_H
#define CORRAL_EGRESS_RESOLVER_H

#include "placeholder.h"

#include <jansson.h>
#include <stddef.h>

#define RESOLVER_TIMEOUT_MS 5000
#define RESOLVER_ANSWER_MAX (1024 * 1024)

/* The question's line (without its newline), malloc'd; NULL when memory ran
 * out. Pure. Names are deduplicated per kind. */
char *resolver_question(const char *host, const struct ph_ref *refs, size_t n);

/* One line (without its newline) sent to the resolver at path, its answer
 * line's object back; NULL with err when it could not be asked, or answered
 * {"error"}. */
json_t *resolver_send(const char *path, const char *line, char *err, size_t errlen);

/* The answer for refs, or NULL with err saying why (never a value). */
json_t *resolver_ask(const char *path, const char *host, const struct ph_ref *refs, size_t n,
                     char *err, size_t errlen);

/* The value of (kind, name) in an answer, or NULL when it is absent, not a
 * string, or holds a byte no header value may hold. Pure. */
const char *resolver_value(json_t *answer, enum ph_kind kind, const char *name);

#endif
