/* rules.h: a sandbox's header rules, {"api.example.com": [{"headers": {...}}],
 * "*.example.com": [...]}: which headers the proxy sets on a host's requests.
 * Pure. A rule never grants access: the policy still decides the host. */
#ifndef CORRAL_EGRESS_RULES_H
#define CORRAL_EGRESS_RULES_H

#include "hostname.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define RULE_HOSTS_MAX 256
#define RULE_HEADERS_MAX 32
#define RULE_NAME_MAX 128
#define RULE_VALUE_MAX 4096

struct rule_header {
    char *name; /* a token, as written */
    char *value;
};

/* One host's rule list, flattened at parse time: its rules' headers in
 * order, a later header of the same name (any case) replacing the earlier. */
struct rule_set {
    char pattern[HOSTNAME_MAX + 2]; /* the name, or ".suffix" for *.suffix */
    bool wildcard;
    struct rule_header *h;
    size_t n;
};

struct rules {
    struct rule_set *sets;
    size_t n;
};

/* obj is the policy's "rules" value. 0, or -1 with err naming the host or
 * header (never a value: it may be a secret). */
int rules_parse(json_t *obj, struct rules *r, char *err, size_t errlen);
void rules_free(struct rules *r);

/* The set for a normalized host name: an exact key, else the longest
 * wildcard suffix strictly shorter than the name; NULL when none. */
const struct rule_set *rules_match(const struct rules *r, const char *name);

/* A header value the proxy may send: no control byte but HTAB (CR, LF and
 * NUL would split or cut the head). */
bool rules_value_ok(const char *v, size_t len);

#endif
