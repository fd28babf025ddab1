/* The snapshot and fork routes' bodies and the list's query
 * (snapshot_parse.h). */
#include "snapshot_parse.h"

#include "sandbox_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORK_TIMEOUT_MAX_S 86400

int snapshot_name_parse(const json_t *body, char name[SNAPSHOT_NAME_MAX + 1], char *err,
                        size_t errlen)
{
    const json_t *v = json_object_get(body, "name");
    int ok = !v || json_is_null(v) ||
             (json_is_string(v) && json_string_length(v) > 0 &&
              json_string_length(v) <= SNAPSHOT_NAME_MAX);

    snprintf(name, SNAPSHOT_NAME_MAX + 1, "%s",
             json_is_string(v) && ok ? json_string_value(v) : "");
    if (!ok)
        snprintf(err, errlen, "name: must be a string of 1-%d characters", SNAPSHOT_NAME_MAX);
    return ok ? 0 : -1;
}

int snapshot_fork_parse(const json_t *body, long *count, long *timeout_s, char *err, size_t errlen)
{
    const json_t *c = json_object_get(body, "count"), *t = json_object_get(body, "timeout");
    int ok;

    *count = json_is_integer(c) ? (long)json_integer_value(c) : 1;
    *timeout_s = json_is_integer(t) ? (long)json_integer_value(t) : SANDBOX_DEFAULT_TIMEOUT_S;
    ok = (!c || json_is_null(c) ||
          (json_is_integer(c) && *count >= 1 && *count <= SNAPSHOT_FORKS_MAX)) &&
         (!t || json_is_null(t) ||
          (json_is_integer(t) && *timeout_s >= 1 && *timeout_s <= FORK_TIMEOUT_MAX_S));
    if (!ok)
        snprintf(err, errlen, "count: 1-%d forks; timeout: 1-%d seconds", SNAPSHOT_FORKS_MAX,
                 FORK_TIMEOUT_MAX_S);
    return ok ? 0 : -1;
}

/* Read with request_query, as the route always has: a value that does not
 * decode keeps what decoded before the fault, so the buffers start zeroed. */
int snapshot_list_query_parse(const struct request *req, int e2b, struct snapshot_list_query *q,
                              char *err, size_t errlen)
{
    char lim[16] = "";

    memset(q, 0, sizeof(*q));
    request_query(req, e2b ? "sandboxID" : "sandbox_id", q->sandbox, sizeof(q->sandbox));
    request_query(req, "name", q->name, sizeof(q->name));
    request_query(req, e2b ? "nextToken" : "cursor", q->after, sizeof(q->after));
    request_query(req, "limit", lim, sizeof(lim));
    if (*lim && (strspn(lim, "0123456789") != strlen(lim) || atol(lim) < 1 ||
                 atol(lim) > SNAPSHOT_LIST_LIMIT_MAX)) {
        snprintf(err, errlen, "limit: must be an integer in [1, %d]", SNAPSHOT_LIST_LIMIT_MAX);
        return -1;
    }
    q->limit = *lim ? (size_t)atol(lim) : SNAPSHOT_LIST_LIMIT_MAX;
    return 0;
}
