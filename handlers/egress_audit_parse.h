/* egress_audit_parse.h: what POST /v1/worker/egress-audit reads (pure;
 * h_egress_audit.c authenticates and records; decision 0091): a proxy's counts
 * of the requests its rules changed, as its worker forwards them,
 *   {"sandbox": id, "audit": [{"host", "headers": [name...], "count"}], "dropped"?}
 * Names only: a value has no field to travel in. tests/unit/unit_egress_audit.c. */
#ifndef CORRAL_EGRESS_AUDIT_PARSE_H
#define CORRAL_EGRESS_AUDIT_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define EGRESS_AUDIT_ENTRIES_MAX 64 /* egress/transform_audit.h's table */
#define EGRESS_AUDIT_HEADERS_MAX 32 /* a host's rule headers at most */
#define EGRESS_AUDIT_COUNT_MAX 1000000000LL

struct egress_audit_entry {
    char host[254];
    char headers[EGRESS_AUDIT_HEADERS_MAX * 130]; /* names joined by ',' */
    long long count;
};

struct egress_audit_body {
    char sandbox[33];
    struct egress_audit_entry e[EGRESS_AUDIT_ENTRIES_MAX];
    size_t n;
    long long dropped;
};

/* 0 with b, or -1 with err naming the field. */
int egress_audit_parse(const json_t *body, struct egress_audit_body *b, char *err, size_t errlen);

#endif
