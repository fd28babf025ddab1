/* logs_query_parse.h: the query of E2B's GET /sandboxes/{id}/logs (start,
 * limit) and GET /v2/sandboxes/{id}/logs (direction, level, search, cursor,
 * limit), as the spec defines them. Pure: reads only req->query; h_logs.c
 * answers. */
#ifndef CORRAL_LOGS_QUERY_PARSE_H
#define CORRAL_LOGS_QUERY_PARSE_H

#include "request.h"

#include <stddef.h>

#define LOGS_V1_LIMIT_MAX 2147483647LL /* the spec's int32 */
#define LOGS_V2_LIMIT_MAX 1000LL
#define LOGS_SEARCH_MAX 256

struct logs_v1_query {
    long long start, limit;
};

struct logs_v2_query {
    long long cursor, limit;
    int backward, min_level; /* min_level: telemetry_level_rank's */
    char search[LOGS_SEARCH_MAX + 1];
};

/* 0 with q filled, or -1 with err naming the parameter (answer 400). */
int logs_v1_query_parse(const struct request *req, struct logs_v1_query *q, char *err,
                        size_t errlen);
int logs_v2_query_parse(const struct request *req, struct logs_v2_query *q, char *err,
                        size_t errlen);

#endif
