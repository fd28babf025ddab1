/* transform.h: one request's head with its host's rule headers set, their
 * placeholders resolved for this request alone (nothing is cached: a value
 * the resolver changes is used by the next request). */
#ifndef CORRAL_EGRESS_TRANSFORM_H
#define CORRAL_EGRESS_TRANSFORM_H

#include "rules.h"

#include <stddef.h>

/* head[0..head_len) is a checked head. 0 with *out (malloc'd, *out_len), or
 * -1 with msg, for the client, naming the placeholder that did not resolve
 * (its name, never a value). */
int transform_head(const struct rule_set *set, const char *resolver, const char *host,
                   const char *head, size_t head_len, char **out, size_t *out_len, char *msg,
                   size_t msglen);

/* The audit line: egress sandbox=ID transform HOST METHOD headers=A,B
 * (names only). */
void transform_log(const char *sandbox, const char *host, const char *method,
                   const struct rule_set *set);

#endif
