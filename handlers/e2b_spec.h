/* e2b_spec.h: E2B's NewSandbox body turned into the native sandbox_spec, so the
 * E2B surface passes the same validation and the same scheduler_create as the
 * native API. Pure (no I/O): unit-tested and fuzzed. */
#ifndef CORRAL_E2B_SPEC_H
#define CORRAL_E2B_SPEC_H

#include "scheduler.h"

#include <jansson.h>

/* The envd protocol version Corral's envd implements (envd/README.md). */
#define E2B_ENVD_VERSION "0.6.4"

/* 0 with spec filled; otherwise the HTTP status to answer (400, or 501 for a
 * feature Corral does not offer yet) with err naming the field. */
int e2b_spec_parse(const json_t *body, struct sandbox_spec *spec, char *err, size_t errlen);

/* The body of PUT /sandboxes/{id}/network (E2B's SandboxNetworkUpdateConfig:
 * allowOut, denyOut, allow_internet_access; an omitted field is cleared). 0
 * with *egress_json the policy text (malloc'd) or NULL for none; otherwise the
 * status to answer (400, 501) with err naming the field. */
int e2b_network_parse(const json_t *body, char **egress_json, char *err, size_t errlen);

/* The same, keeping the sandbox's workload identity (iam, its policy's "iam"
 * object or NULL: an update carries none) in the new policy, where the
 * rules' identity placeholders must name its tokens. */
int e2b_network_parse_iam(const json_t *body, const json_t *iam, char **egress_json, char *err,
                          size_t errlen);

#endif
