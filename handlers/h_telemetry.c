/* POST /v1/worker/telemetry: a worker's samples and log lines of its
 * sandboxes, sent beside the long-poll every metrics interval (decision 0047).
 *
 * Authenticated as the heartbeat is. A worker writes only the sandboxes its
 * map holds (worker_slot_get, the check every report passes): another
 * worker's sandbox, or one never placed, is refused by id and nothing of it
 * is written. The whole body is checked before anything is written. */
#include "clock.h"
#include "handlers.h"
#include "respond.h"
#include "telemetry.h"
#include "telemetry_view.h"
#include "worker_registry.h"
#include "worker_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SANDBOXES 1000
#define MAX_LINES 200 /* per sandbox and push */

/* One sandbox's part of the body, in the shape it is stored. */
struct push_item {
    const char *sbid;
    char *metric;
    long long metric_ms;
    size_t n;
    char **logs;   /* n lines, stored shape */
    long long *ms; /* their times */
};

static void items_free(struct push_item *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].metric);
        for (size_t k = 0; k < v[i].n; k++)
            free(v[i].logs[k]);
        free(v[i].logs);
        free(v[i].ms);
    }
    free(v);
}

/* A sandbox's log lines, each checked and rebuilt. 0, or -1 with err. */
static int lines_parse(const json_t *logs, size_t i, long long now, struct push_item *it, char *err,
                       size_t errlen)
{
    size_t n = json_array_size(logs);
    char why[200];

    if (n == 0)
        return 0;
    it->logs = calloc(n, sizeof(*it->logs));
    it->ms = calloc(n, sizeof(*it->ms));
    if (!it->logs || !it->ms) {
        snprintf(err, errlen, "sandboxes[%zu].logs: out of memory", i);
        return -1;
    }
    for (; it->n < n; it->n++) {
        it->logs[it->n] =
            telemetry_log_in(json_array_get(logs, it->n), now, &it->ms[it->n], why, sizeof(why));
        if (!it->logs[it->n]) {
            snprintf(err, errlen, "sandboxes[%zu].logs[%zu]%s", i, it->n, why);
            return -1;
        }
    }
    return 0;
}

static int item_parse(const json_t *sb, size_t i, long long now, struct push_item *it, char *err,
                      size_t errlen)
{
    const json_t *metric = json_object_get(sb, "metric"), *logs = json_object_get(sb, "logs");
    char why[200];

    it->sbid = json_string_value(json_object_get(sb, "id"));
    if (!it->sbid || !token_is_id(it->sbid)) {
        snprintf(err, errlen, "sandboxes[%zu].id: must be a sandbox id", i);
        return -1;
    }
    if (metric &&
        !(it->metric = telemetry_metric_in(metric, now, &it->metric_ms, why, sizeof(why)))) {
        snprintf(err, errlen, "sandboxes[%zu].%s", i, why);
        return -1;
    }
    if (logs && (!json_is_array(logs) || json_array_size(logs) > MAX_LINES)) {
        snprintf(err, errlen, "sandboxes[%zu].logs: must be an array of at most %d lines", i,
                 MAX_LINES);
        return -1;
    }
    return lines_parse(logs, i, now, it, err, errlen);
}

/* Every item, or NULL after answering 400. */
static struct push_item *body_parse(struct request *req, const json_t *body, size_t *n)
{
    const json_t *sbs = json_object_get(body, "sandboxes");
    long long now = clock_now_ms();
    struct push_item *v;
    char err[256];

    if (!json_is_array(sbs) || json_array_size(sbs) > MAX_SANDBOXES) {
        respond_error(req, 400, "sandboxes: must be an array of at most %d", MAX_SANDBOXES);
        return NULL;
    }
    *n = json_array_size(sbs);
    v = calloc(*n + 1, sizeof(*v));
    if (!v) {
        respond_error(req, 500, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < *n; i++) {
        if (item_parse(json_array_get(sbs, i), i, now, &v[i], err, sizeof(err)) != 0) {
            items_free(v, i + 1);
            respond_error(req, 400, "%s", err);
            return NULL;
        }
    }
    return v;
}

/* 1 written, 0 refused (not held by this worker), -1 Redis. */
static int write_item(struct request *req, const char *wid, const struct push_item *it)
{
    struct worker_slot slot;
    int held = worker_slot_get(req->rc, req->cred.ws, wid, it->sbid, &slot);
    struct telemetry_push p = {it->metric_ms, it->metric, it->n, it->ms,
                               (const char *const *)it->logs};

    if (held != 1)
        return held;
    return telemetry_write(req->rc, slot.ws, it->sbid, &p) == 0 ? 1 : -1;
}

void h_worker_telemetry(struct request *req)
{
    char wid[33];
    json_t *body = request_json_body(req), *refused;
    struct push_item *items;
    size_t n = 0, accepted = 0;

    if (!body)
        return;
    items = body_parse(req, body, &n);
    if (!items || worker_authenticate(req, wid) != 1) {
        if (items)
            items_free(items, n);
        json_decref(body);
        return;
    }
    refused = json_array();
    for (size_t i = 0; i < n; i++) {
        int w = write_item(req, wid, &items[i]);
        if (w < 0)
            break;
        if (w == 0)
            json_array_append_new(refused, json_string(items[i].sbid));
        accepted += (size_t)w;
    }
    if (accepted + json_array_size(refused) < n) {
        json_decref(refused);
        respond_store_down(req);
    } else {
        respond_json(req, 200,
                     json_pack("{s:I, s:o}", "accepted", (json_int_t)accepted, "refused", refused));
    }
    items_free(items, n);
    json_decref(body);
}
