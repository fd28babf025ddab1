/* sandbox_spec_parse.h: validation of a native create body. A pure function
 * (no I/O), so it is unit-tested and fuzzed on its own. */
#ifndef CORRAL_SANDBOX_SPEC_PARSE_H
#define CORRAL_SANDBOX_SPEC_PARSE_H

#include "scheduler.h"

#include <jansson.h>

/* Fills spec from body. 0, or -1 with err naming the field and the rule (the
 * caller answers 400). spec must be freed with sandbox_spec_free on success. */
int sandbox_spec_parse(const json_t *body, struct sandbox_spec *spec, char *err, size_t errlen);

/* Shared field rules, also used by the worker routes. */
int valid_name(const char *s, size_t max); /* [a-z0-9][a-z0-9._-]* up to max */
int valid_domain(const char *s);           /* host name, optionally "*." prefixed */

#endif
