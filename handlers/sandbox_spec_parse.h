/* sandbox_spec_parse.h: validation of a native create body. A pure function
 * (no I/O), so it is unit-tested and fuzzed on its own. */
#ifndef CORRAL_SANDBOX_SPEC_PARSE_H
#define CORRAL_SANDBOX_SPEC_PARSE_H

#include "egress_rule.h"
#include "scheduler.h"

#include <jansson.h>

/* Fills spec from body. 0, or -1 with err naming the field and the rule (the
 * caller answers 400). spec must be freed with sandbox_spec_free on success. */
int sandbox_spec_parse(const json_t *body, struct sandbox_spec *spec, char *err, size_t errlen);

/* The body of PUT /v1/sandboxes/{id}/network: {"allowed_domains": [...]} or
 * {"allowed_domains": null}. 0 with *egress_json the policy text (malloc'd) or
 * NULL for no policy; -1 with err naming the field. */
int sandbox_network_parse(const json_t *body, char **egress_json, char *err, size_t errlen);

/* The first key of body not in the NULL-terminated list known, or NULL. */
const char *first_unknown_field(const json_t *body, const char *const known[]);

/* Shared field rules, also used by the worker routes (valid_domain: egress_rule.h). */
int valid_name(const char *s, size_t max); /* [a-z0-9][a-z0-9._-]* up to max */

#endif
