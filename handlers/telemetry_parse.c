/* The body of POST /v1/worker/telemetry (telemetry_parse.h). */
#include "telemetry_parse.h"
#include "body_array.h"
#include "telemetry_view.h"
#include "token.h"

#include <stdio.h>
#include <stdlib.h>

static void item_free(void *elem)
{
    struct telemetry_item *it = elem;

    free(it->metric);
    for (size_t k = 0; k < it->n; k++)
        free(it->logs[k]);
    free(it->logs);
    free(it->ms);
}

/* A sandbox's log lines, each checked and rebuilt. 0, or -1 with err. */
static int lines_parse(const json_t *logs, size_t i, long long now, struct telemetry_item *it,
                       char *err, size_t errlen)
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

static int item_parse(const json_t *sb, size_t i, void *elem, void *ctx, char *err, size_t errlen)
{
    const json_t *metric = json_object_get(sb, "metric"), *logs = json_object_get(sb, "logs");
    struct telemetry_item *it = elem;
    long long now = *(const long long *)ctx;
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
    if (logs && (!json_is_array(logs) || json_array_size(logs) > TELEMETRY_PUSH_MAX_LINES)) {
        snprintf(err, errlen, "sandboxes[%zu].logs: must be an array of at most %d lines", i,
                 TELEMETRY_PUSH_MAX_LINES);
        return -1;
    }
    return lines_parse(logs, i, now, it, err, errlen);
}

static const struct body_array_item item_how = {
    .size = sizeof(struct telemetry_item), .parse = item_parse, .free = item_free};

int telemetry_body_parse(const json_t *body, long long now_ms, struct telemetry_body *out,
                         char *err, size_t errlen)
{
    struct body_array_item how = item_how;
    enum body_array_status st;
    void *v;

    how.ctx = &now_ms;
    st = body_array_parse(json_object_get(body, "sandboxes"), TELEMETRY_PUSH_MAX_SANDBOXES, &how,
                          &v, &out->n, err, errlen);
    out->items = v; /* NULL but when parsed */
    return body_array_answer(st, "sandboxes", TELEMETRY_PUSH_MAX_SANDBOXES, "", err, errlen);
}

void telemetry_body_free(struct telemetry_body *b)
{
    body_array_free(b->items, b->n, &item_how);
    b->items = NULL;
    b->n = 0;
}
