/* transform_audit.h: every request a rule changed, for the workspace's audit
 * (decision 0091). Counted per (host, header names) as requests pass, and
 * sent to the resolver (workerd) once a second as one line
 *   {"audit": [{"host": "api.example.com", "headers": ["Authorization"], "count": 3}]}
 * which workerd gives to the control plane. Names only, never a value. What
 * the resolver does not take is kept for the next second; past
 * AUDIT_ENTRIES_MAX distinct entries, a request is counted in the next line's
 * "dropped" (and logged), never silently lost. */
#ifndef CORRAL_EGRESS_TRANSFORM_AUDIT_H
#define CORRAL_EGRESS_TRANSFORM_AUDIT_H

#include "rules.h"

#define AUDIT_ENTRIES_MAX 64
#define AUDIT_FLUSH_MS 1000

/* One request to host changed by set's headers. Thread-safe, no I/O. */
void transform_audit_note(const char *host, const struct rule_set *set);

/* The line to send for what is counted (malloc'd), the counts taken; NULL when
 * nothing is counted. Pure but for the table's lock. */
char *transform_audit_take(void);

/* Puts back a line's counts that were not delivered. */
void transform_audit_return(const char *line);

/* Starts the thread that sends the counts every AUDIT_FLUSH_MS (audit_flush.c).
 * 0, -1. */
int transform_audit_start(void);

#endif
