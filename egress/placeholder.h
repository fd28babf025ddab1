/* placeholder.h: ${e2b.secrets.NAME} and ${e2b.identity.tokens.NAME} in a
 * rule's header value, resolved per request (resolver.h). Pure. Any other
 * "${" is literal text, but "${e2b." that is not one of the two forms is
 * malformed: a typo must not reach a server as a literal. */
#ifndef CORRAL_EGRESS_PLACEHOLDER_H
#define CORRAL_EGRESS_PLACEHOLDER_H

#include <stddef.h>

#define PH_NAME_MAX 128
#define PH_REFS_MAX 16 /* per header value */

enum ph_kind { PH_SECRET, PH_TOKEN };

struct ph_ref {
    enum ph_kind kind;
    char name[PH_NAME_MAX + 1]; /* [A-Za-z0-9._-]{1,128} */
};

/* The placeholders in v, in order, into refs (at most max): their number, or
 * -1 when one is malformed or there are more than max. */
int ph_scan(const char *v, struct ph_ref *refs, size_t max);

/* A value for (kind, name), or NULL when it is unknown. */
typedef const char *(*ph_lookup)(void *ctx, enum ph_kind kind, const char *name);

/* v with every placeholder replaced by its value: a malloc'd string, or NULL
 * with *missing naming the first unresolved one (or missing->name "" when v
 * is malformed or memory ran out). */
char *ph_expand(const char *v, ph_lookup lookup, void *ctx, struct ph_ref *missing);

/* "secrets" or "tokens": the key of the kind in the resolver's protocol. */
const char *ph_kind_key(enum ph_kind kind);

#endif
