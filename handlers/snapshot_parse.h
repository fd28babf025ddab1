/* snapshot_parse.h: what the snapshot and fork routes read (pure: h_snapshots.c
 * reads the request and answers): a snapshot create's body ({"name"}), a
 * fork's ({"count", "timeout"}), and the list's query (the sandbox and name
 * filters, limit, and the cursor: nextToken on E2B's, cursor on the native). */
#ifndef CORRAL_SNAPSHOT_PARSE_H
#define CORRAL_SNAPSHOT_PARSE_H

#include "request.h"

#include <jansson.h>
#include <stddef.h>

#define SNAPSHOT_NAME_MAX 128
#define SNAPSHOT_FORKS_MAX 10
#define SNAPSHOT_LIST_LIMIT_MAX 100 /* the default too */

struct snapshot_list_query {
    char sandbox[64], name[SNAPSHOT_NAME_MAX + 1], after[64]; /* "" when absent */
    size_t limit;
};

/* The optional name ("" when absent or null). 0, or -1 with err. */
int snapshot_name_parse(const json_t *body, char name[SNAPSHOT_NAME_MAX + 1], char *err,
                        size_t errlen);

/* The fork's count (1 by default) and each fork's timeout in seconds
 * (SANDBOX_DEFAULT_TIMEOUT_S by default). 0, or -1 with err. */
int snapshot_fork_parse(const json_t *body, long *count, long *timeout_s, char *err, size_t errlen);

/* e2b: the spec's parameter names (sandboxID, nextToken) rather than the
 * native ones (sandbox_id, cursor). 0 with q, or -1 with err. */
int snapshot_list_query_parse(const struct request *req, int e2b, struct snapshot_list_query *q,
                              char *err, size_t errlen);

#endif
