/* egress_policy.h: a sandbox's egress policy, {"allow": [...], "deny": [...]},
 * the one shape corral-api stores and the worker's proxy enforces. E2B's rules:
 * an allow entry wins over a deny entry; a destination matching neither is
 * allowed; "0.0.0.0/0" and "::/0" in deny close everything not allowed.
 * Private destinations are closed whatever the policy says. */
#ifndef CORRAL_COMMON_EGRESS_POLICY_H
#define CORRAL_COMMON_EGRESS_POLICY_H

#include "egress_rule.h"

#include <jansson.h>

/* Checks a JSON array of entries: at most EGRESS_RULE_MAX_LIST strings, each
 * of a kind in the mask kinds (EGRESS_RULE_*). An allow list (is_allow) may
 * not name private addresses. 0, or -1 with err naming field[index]. */
int egress_list_check(const json_t *list, const char *field, unsigned kinds, int is_allow,
                      char *err, size_t errlen);

/* Appends "0.0.0.0/0" and "::/0" to deny unless already there. */
void egress_deny_all(json_t *deny);

/* The policy as compact JSON text (malloc'd; NULL when out of memory). */
char *egress_policy_text(const json_t *allow, const json_t *deny);

#endif
