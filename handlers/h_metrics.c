/* A sandbox's metrics: E2B's GET /sandboxes/{id}/metrics and GET
 * /sandboxes/metrics, and the native GET /v1/sandboxes/{id}/metrics. The
 * samples are what its worker pushed (h_telemetry.c, decision 0047); a
 * sandbox of another workspace is a 404 like a missing one. */
#include "handlers.h"
#include "metrics_ids_parse.h"
#include "respond.h"
#include "sandbox_store.h"
#include "telemetry.h"
#include "telemetry_query.h"
#include "telemetry_view.h"

#include <stdio.h>
#include <string.h>

#define TIME_MAX_S 253402300799LL /* 9999-12-31: any later is not a time */

/* start and end (unix seconds, both ends inclusive) as a range of ms. */
static int time_range(struct request *req, long long *from_ms, long long *to_ms)
{
    long long start, end;

    if (query_int(req, "start", 0, TIME_MAX_S, 0, &start) != 0 ||
        query_int(req, "end", 0, TIME_MAX_S, TIME_MAX_S, &end) != 0)
        return -1;
    if (start > end) {
        respond_error(req, 400, "start: must not be after end");
        return -1;
    }
    *from_ms = start * 1000;
    *to_ms = end * 1000 + 999;
    return 0;
}

/* The caller's sandbox's samples in the query's range, each rendered; NULL
 * after answering. */
static json_t *series(struct request *req, json_t *(*render)(const char *))
{
    struct telemetry_list l;
    long long from, to;
    json_t *out;

    if (sandbox_visible(req, req->params[0]) != 0 || time_range(req, &from, &to) != 0)
        return NULL;
    if (telemetry_metrics(req->rc, req->cred.ws, req->params[0], from, to, &l) != 0) {
        respond_store_down(req);
        return NULL;
    }
    out = json_array();
    for (size_t i = 0; i < l.n; i++) {
        json_t *m = render(l.items[i]);
        if (m)
            json_array_append_new(out, m);
    }
    telemetry_list_free(&l);
    return out;
}

void h_e2b_sandbox_metrics(struct request *req)
{
    json_t *out = series(req, telemetry_metric_e2b);

    if (out)
        respond_json(req, 200, out);
}

void h_sandbox_metrics(struct request *req)
{
    json_t *out = series(req, telemetry_metric_native);

    if (out)
        respond_json(req, 200,
                     json_pack("{s:s, s:o}", "sandbox_id", req->params[0], "metrics", out));
}

/* The newest sample of sbid into out, if it is a running sandbox of the
 * caller's. 0, or -1 Redis. */
static int add_latest(struct request *req, const char *sbid, json_t *out)
{
    struct sandbox_record rec;
    struct telemetry_list l;
    int found = sandbox_read(req->rc, req->cred.ws, sbid, &rec), running = 0;

    if (found == 1)
        running = sandbox_is_running(&rec);
    sandbox_record_free(&rec);
    if (found < 0 || (running && telemetry_latest_metric(req->rc, req->cred.ws, sbid, &l) != 0))
        return -1;
    if (!running)
        return 0;
    if (l.n == 1) {
        json_t *m = telemetry_metric_e2b(l.items[0]);
        if (m)
            json_object_set_new(out, sbid, m);
    }
    telemetry_list_free(&l);
    return 0;
}

void h_e2b_sandboxes_metrics(struct request *req)
{
    char text[METRICS_IDS_MAX * (SANDBOX_ID_MAX + 1) + 1], err[128];
    char ids[METRICS_IDS_MAX][SANDBOX_ID_MAX];
    int given = request_query_strict(req, "sandbox_ids", text, sizeof(text)), n = -1;
    json_t *out;

    if (given < 0)
        snprintf(err, sizeof(err), "sandbox_ids: at most %d ids", METRICS_IDS_MAX);
    else if (given == 0)
        snprintf(err, sizeof(err), "sandbox_ids: required, a comma-separated list of sandbox ids");
    else
        n = metrics_ids_parse(text, ids, err, sizeof(err));
    if (n < 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    out = json_object();
    for (int i = 0; i < n; i++) {
        if (add_latest(req, ids[i], out) != 0) {
            json_decref(out);
            respond_store_down(req);
            return;
        }
    }
    respond_json(req, 200, json_pack("{s:o}", "sandboxes", out));
}
