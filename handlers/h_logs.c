/* A sandbox's log lines (envd's start, process start and end lines, and
 * whatever else envd writes to the container's log), as its worker pushed
 * them: E2B's GET /sandboxes/{id}/logs (SandboxLogs) and GET
 * /v2/sandboxes/{id}/logs (SandboxLogsV2Response), with the parameters of
 * E2B's spec. At most TELEMETRY_LOGS_MAX lines are kept, the newest. */
#include "handlers.h"
#include "logs_query_parse.h"
#include "respond.h"
#include "telemetry.h"
#include "telemetry_query.h"
#include "telemetry_view.h"

#include <limits.h>
#include <string.h>

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
    struct logs_v1_query q;
    struct telemetry_list l;
    char err[128];
    json_t *logs, *entries;

    if (logs_v1_query_parse(req, &q, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (lines(req, q.start, LLONG_MAX, &l) != 0)
        return;
    logs = json_array();
    entries = json_array();
    for (size_t i = 0; i < l.n && json_array_size(logs) < (size_t)q.limit; i++) {
        json_t *line = telemetry_log_line(l.items[i]);
        if (!line)
            continue;
        json_array_append_new(logs, line);
        json_array_append_new(entries, telemetry_log_entry(l.items[i]));
    }
    telemetry_list_free(&l);
    respond_json(req, 200, json_pack("{s:o, s:o}", "logs", logs, "logEntries", entries));
}

static int v2_keep(const struct logs_v2_query *q, const json_t *entry)
{
    const char *msg = json_string_value(json_object_get(entry, "message"));

    return telemetry_level_rank(json_string_value(json_object_get(entry, "level"))) >=
               q->min_level &&
           (!q->search[0] || (msg && strstr(msg, q->search)));
}

void h_e2b_logs_v2(struct request *req)
{
    struct logs_v2_query q;
    struct telemetry_list l;
    char err[128];
    json_t *out;

    if (logs_v2_query_parse(req, &q, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (lines(req, q.backward ? 0 : q.cursor, q.backward ? q.cursor : LLONG_MAX, &l) != 0)
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
