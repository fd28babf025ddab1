/* e2b_list_query.h: the query of GET /v2/sandboxes (and the deprecated GET
 * /sandboxes) as E2B's spec defines it: metadata, state, order, startedAfter,
 * template, limit, nextToken. Parsing and the keep/sort/cursor rules, no I/O. */
#ifndef CORRAL_E2B_LIST_QUERY_H
#define CORRAL_E2B_LIST_QUERY_H

#include "request.h"

#include <stddef.h>

#define E2B_LIST_LIMIT_MAX 100 /* the spec's paginationLimit: default and maximum */

struct e2b_list_query {
    char metadata[1024];
    char template_name[128];
    int want_running;        /* state is absent or names running */
    int want_paused;         /* state is absent or names paused */
    int ascending;           /* order=asc: oldest first */
    long long started_after; /* ms; LLONG_MIN when absent */
    size_t limit;
    int has_cursor; /* nextToken: the (started, id) of the last item sent */
    long long cursor_started;
    char cursor_id[32];
};

/* One listed sandbox, for sorting and the cursor. */
struct e2b_listed_key {
    long long started;
    const char *id;
};

/* 0 with q filled; otherwise -1 with err naming the parameter (answer 400).
 * paginate is 0 for the deprecated route, which only takes metadata. */
int e2b_list_query_parse(const struct request *req, int paginate, struct e2b_list_query *q,
                         char *err, size_t errlen);

/* RFC 3339 date-time ("2024-05-01T10:00:00.123Z", "...+02:00") to ms since the
 * epoch; -1 when it is not one. */
int e2b_parse_time(const char *text, long long *ms);

/* <0, 0, >0 as a comes before b in q's order (started, then id: a total order,
 * so a cursor names one place). */
int e2b_listed_cmp(const struct e2b_list_query *q, const struct e2b_listed_key *a,
                   const struct e2b_listed_key *b);

/* 1 when k comes after q's cursor (or there is none). */
int e2b_after_cursor(const struct e2b_list_query *q, const struct e2b_listed_key *k);

/* The nextToken naming k as the last item sent. */
void e2b_cursor_format(const struct e2b_listed_key *k, char *out, size_t outlen);

#endif
