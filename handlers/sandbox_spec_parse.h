/* sandbox_spec_parse.h: validation of a native create body. A pure function
 * (no I/O), so it is unit-tested and fuzzed on its own. */
#ifndef CORRAL_SANDBOX_SPEC_PARSE_H
#define CORRAL_SANDBOX_SPEC_PARSE_H

#include "egress_rule.h"
#include "scheduler.h"

#include <jansson.h>

/* The field of a create body at fault. Each surface names the fields its own
 * way (spec_native_names here; E2B's names in e2b_spec.c), so the message is
 * written only once the code is known, never rewritten after. */
enum spec_field {
    SPEC_FIELD_BODY,    /* the body itself */
    SPEC_FIELD_UNKNOWN, /* a field no create takes (spec_error.key names it) */
    SPEC_FIELD_TEMPLATE,
    SPEC_FIELD_TIMEOUT,
    SPEC_FIELD_CPU_CORES,
    SPEC_FIELD_MEMORY_MB,
    SPEC_FIELD_METADATA,
    SPEC_FIELD_ENV,
    SPEC_FIELD_ALLOWED_DOMAINS,
    SPEC_FIELD_SECURE,
    SPEC_FIELD_REQUIRE_ISOLATION,
    SPEC_FIELD_ON_TIMEOUT,
    SPEC_FIELD_AUTO_RESUME,
    SPEC_FIELD_KEEP_MEMORY,
    SPEC_FIELD_VOLUME_MOUNTS,
    SPEC_FIELD_COUNT
};

/* The rule it broke. */
enum spec_rule {
    SPEC_RULE_NOT_OBJECT,    /* the body is not a JSON object */
    SPEC_RULE_UNKNOWN_FIELD, /* no such field */
    SPEC_RULE_WORKSPACE,     /* a workspace field: it comes from the API key */
    SPEC_RULE_VALUE,         /* the field's type or range (its own wording) */
    SPEC_RULE_MAP_TYPE,      /* not an object of strings */
    SPEC_RULE_MAP_SIZE,      /* too many entries */
    SPEC_RULE_MAP_KEY,       /* a key not allowed (key) */
    SPEC_RULE_MAP_VALUE,     /* the value of key is not a short string */
    SPEC_RULE_SECURE_FALSE,  /* native sandboxes are always secure */
    SPEC_RULE_TIER_UNKNOWN,  /* require_isolation=UNKNOWN */
    SPEC_RULE_EGRESS,        /* an egress list entry (detail says which and why) */
    SPEC_RULE_OUT_OF_MEMORY,
};

struct spec_error {
    enum spec_field field;
    enum spec_rule rule;
    char key[72];     /* the unknown field, or the map key at fault */
    char detail[200]; /* SPEC_RULE_EGRESS: what follows the field name ("[0]: ...") */
};

/* The native API's field names, indexed by enum spec_field. */
extern const char *const spec_native_names[SPEC_FIELD_COUNT];

/* The message for e ("<field>: <rule>"), the field spelled as names has it. */
void spec_error_text(const struct spec_error *e, const char *const names[SPEC_FIELD_COUNT],
                     char *out, size_t outlen);

/* Fills spec from body. 0, or -1 with e saying which field broke which rule
 * (the caller answers 400). spec must be freed with sandbox_spec_free on
 * success. */
int sandbox_spec_parse_coded(const json_t *body, struct sandbox_spec *spec, struct spec_error *e);

/* The same with the message in the native names. */
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
