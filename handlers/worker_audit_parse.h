/* worker_audit_parse.h: the body of POST /v1/worker/audit checked (pure: no
 * Redis, no FastCGI). Each line is one of the permission gate's decisions
 * (envd's audit.jsonl), rebuilt from its checked fields only: nothing a
 * worker sent is recorded as it came. */
#ifndef CORRAL_WORKER_AUDIT_PARSE_H
#define CORRAL_WORKER_AUDIT_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define WORKER_AUDIT_MAX_LINES 200
#define WORKER_AUDIT_MAX_LINE 8192 /* bytes of one line */

struct gate_decision {
    json_t *fields;   /* the checked fields, as recorded */
    const char *sbid; /* in fields */
    int allowed;
};

struct worker_audit_body {
    struct gate_decision *v;
    size_t n;
};

/* {"lines": ["<one line of the gate's audit.jsonl>", ...]} into out. 0, or
 * the status to answer (400, 500) with err; out is then empty. */
int worker_audit_body_parse(const json_t *body, struct worker_audit_body *out, char *err,
                            size_t errlen);
void worker_audit_body_free(struct worker_audit_body *b);

#endif
