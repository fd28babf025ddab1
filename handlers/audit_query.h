/* audit_query.h: the query of GET /v1/audit (sandbox, event, actor, since,
 * until, limit, cursor) parsed into a struct audit_query. Pure. */
#ifndef CORRAL_AUDIT_QUERY_H
#define CORRAL_AUDIT_QUERY_H

#include "audit.h"
#include "request.h"

#include <stddef.h>

#define AUDIT_LIMIT_DEFAULT 100
#define AUDIT_LIMIT_MAX 1000

/* 0 with q filled; otherwise -1 with err naming the parameter (answer 400). */
int audit_query_parse(const struct request *req, struct audit_query *q, char *err, size_t errlen);

#endif
