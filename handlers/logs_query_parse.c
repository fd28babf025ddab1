/* The logs routes' queries (logs_query_parse.h). */
#include "logs_query_parse.h"

#include "query_int_parse.h"
#include "telemetry_view.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define V1_LIMIT_DEFAULT 1000

int logs_v1_query_parse(const struct request *req, struct logs_v1_query *q, char *err,
                        size_t errlen)
{
    return query_int_parse(req, "start", 0, LLONG_MAX, 0, &q->start, err, errlen) != 0 ||
                   query_int_parse(req, "limit", 0, LOGS_V1_LIMIT_MAX, V1_LIMIT_DEFAULT, &q->limit,
                                   err, errlen) != 0
               ? -1
               : 0;
}

/* A backward read starts from the newest line, a forward one from the
 * oldest: the cursor's default follows the direction. */
int logs_v2_query_parse(const struct request *req, struct logs_v2_query *q, char *err,
                        size_t errlen)
{
    char dir[16] = "", level[16] = "";
    int d = request_query_strict(req, "direction", dir, sizeof(dir));
    int lv = request_query_strict(req, "level", level, sizeof(level));
    int s = request_query_strict(req, "search", q->search, sizeof(q->search));

    q->backward = d > 0 && strcmp(dir, "backward") == 0;
    q->min_level = lv > 0 ? telemetry_level_rank(level) : 0;
    if (s <= 0)
        q->search[0] = '\0';
    if (d < 0 || (d > 0 && !q->backward && strcmp(dir, "forward") != 0)) {
        snprintf(err, errlen, "direction: must be forward or backward");
        return -1;
    }
    if (lv < 0 || q->min_level < 0) {
        snprintf(err, errlen, "level: must be one of debug, info, warn, error");
        return -1;
    }
    if (s < 0) {
        snprintf(err, errlen, "search: must be at most %d bytes", LOGS_SEARCH_MAX);
        return -1;
    }
    return query_int_parse(req, "cursor", 0, LLONG_MAX, q->backward ? LLONG_MAX : 0, &q->cursor,
                           err, errlen) != 0 ||
                   query_int_parse(req, "limit", 0, LOGS_V2_LIMIT_MAX, LOGS_V2_LIMIT_MAX, &q->limit,
                                   err, errlen) != 0
               ? -1
               : 0;
}
