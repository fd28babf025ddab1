/* A sandbox's log lines (envd's start, process start and end lines, and
 * whatever else envd writes to the container's log), as its worker pushed
 * them: E2B's GET /sandboxes/{id}/logs (SandboxLogs) and GET
 * /v2/sandboxes/{id}/logs (SandboxLogsV2Response), with the parameters of
 * E2B's spec. At most TELEMETRY_LOGS_MAX lines are kept, the newest. */
#include "handlers.h"
#include "respond.h"
#include "telemetry.h"
#include "telemetry_query.h"
#include "telemetry_view.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define V1_LIMIT_MAX 2147483647LL /* the spec's int32 */
#define V2_LIMIT_MAX 1000LL
#define SEARCH_MAX 256

/* The caller's sandbox's lines scored in [from, to]; -1 after answering. */
static int lines(struct request *req, long long from, long long to, struct telemetry_list *l)
{
    if (sandbox_visible(req, req->params[0]) != 0)
        return -1;
    if (telemetry_logs(req->rc, req->cred.ws, req->params[0], from, to, l) != 0) {
        respond_store_down(req);
        return -1;
    }
    return 0;
}

void h_e2b_logs(struct request *req)
{
    struct telemetry_list l;
    long long start, limit;
    json_t *logs, *entries;

    if (query_int(req, "start", 0, LLONG_MAX, 0, &start) != 0 ||
        query_int(req, "limit", 0, V1_LIMIT_MAX, 1000, &limit) != 0 ||
        lines(req, start, LLONG_MAX, &l) != 0)
        return;
    logs = json_array();
    entries = json_array();
    for (size_t i = 0; i < l.n && json_array_size(logs) < (size_t)limit; i++) {
        json_t *line = telemetry_log_line(l.items[i]);
        if (!line)
            continue;
        json_array_append_new(logs, line);
        json_array_append_new(entries, telemetry_log_entry(l.items[i]));
    }
    telemetry_list_free(&l);
    respond_json(req, 200, json_pack("{s:o, s:o}", "logs", logs, "logEntries", entries));
}

struct v2_query {
    long long cursor, limit;
    int backward, min_level;
    char search[SEARCH_MAX + 1];
};

/* 0, or -1 after answering 400 naming the parameter. */
static int v2_parse(struct request *req, struct v2_query *q)
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
        respond_error(req, 400, "direction: must be forward or backward");
        return -1;
    }
    if (lv < 0 || q->min_level < 0) {
        respond_error(req, 400, "level: must be one of debug, info, warn, error");
        return -1;
    }
    if (s < 0) {
        respond_error(req, 400, "search: must be at most %d bytes", SEARCH_MAX);
        return -1;
    }
    return query_int(req, "cursor", 0, LLONG_MAX, q->backward ? LLONG_MAX : 0, &q->cursor) ||
                   query_int(req, "limit", 0, V2_LIMIT_MAX, V2_LIMIT_MAX, &q->limit)
               ? -1
               : 0;
}

static int v2_keep(const struct v2_query *q, const json_t *entry)
{
    const char *msg = json_string_value(json_object_get(entry, "message"));

    return telemetry_level_rank(json_string_value(json_object_get(entry, "level"))) >=
               q->min_level &&
           (!q->search[0] || (msg && strstr(msg, q->search)));
}

void h_e2b_logs_v2(struct request *req)
{
    struct v2_query q;
    struct telemetry_list l;
    json_t *out;

    if (v2_parse(req, &q) != 0 ||
        lines(req, q.backward ? 0 : q.cursor, q.backward ? q.cursor : LLONG_MAX, &l) != 0)
        return;
    out = json_array();
    for (size_t k = 0; k < l.n && json_array_size(out) < (size_t)q.limit; k++) {
        json_t *e = telemetry_log_entry(l.items[q.backward ? l.n - 1 - k : k]);
        if (e && v2_keep(&q, e))
            json_array_append(out, e);
        json_decref(e);
    }
    telemetry_list_free(&l);
    respond_json(req, 200, json_pack("{s:o}", "logs", out));
}
