/* E2B listing: GET /v2/sandboxes (filters, pagination by x-next-token) and the
 * deprecated GET /sandboxes, and GET /templates. Only running sandboxes are
 * listed: E2B's states are running and paused, and Corral does not pause. */
#include "e2b_spec.h"
#include "e2b_view.h"
#include "handlers.h"
#include "keys.h"
#include "respond.h"
#include "sandbox_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIMIT 1000

int metadata_matches(const json_t *meta, const char *filter);

struct listed {
    json_t *view;
    long long started;
};

static int newest_first(const void *a, const void *b)
{
    const struct listed *x = a, *y = b;
    return (x->started < y->started) - (x->started > y->started);
}

/* Running sandboxes of the caller matching the metadata filter, newest first. */
static struct listed *collect(struct request *req, const char *meta, size_t *n)
{
    char key[128];
    redisReply *ids, *rec;
    struct listed *out;

    snprintf(key, sizeof(key), K_SBS, req->cred.ws);
    ids = rconn_cmd(req->rc, 0, "SMEMBERS %s", key);
    if (!ids)
        return NULL;
    out = calloc(ids->elements + 1, sizeof(*out));
    *n = 0;
    for (size_t i = 0; out && i < ids->elements; i++) {
        int absent;
        const char *state, *started;
        json_t *view;
        rec = sandbox_get(req->rc, req->cred.ws, ids->element[i]->str, &absent);
        state = rec ? reply_hget(rec, "state") : NULL;
        if (state && strcmp(state, "running") == 0) {
            view = e2b_view(rec, E2B_LISTED, req->conf);
            started = reply_hget(rec, "started_at");
            if (!*meta || metadata_matches(json_object_get(view, "metadata"), meta))
                out[(*n)++] = (struct listed){view, started ? atoll(started) : 0};
            else
                json_decref(view);
        }
        if (rec)
            freeReplyObject(rec);
    }
    freeReplyObject(ids);
    if (out)
        qsort(out, *n, sizeof(*out), newest_first);
    return out;
}

/* Validates state (a comma list of running|paused); 1 if running is wanted. */
static int wants_running(struct request *req, int *ok)
{
    char state[64], *save = NULL, *s;
    int running = 0;

    *ok = 1;
    if (!request_query(req, "state", state, sizeof(state)) || !*state)
        return 1;
    for (s = strtok_r(state, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (strcmp(s, "running") == 0)
            running = 1;
        else if (strcmp(s, "paused") != 0)
            *ok = 0;
    }
    return running;
}

static void list(struct request *req, int paginate)
{
    char meta[1024] = "", num[24];
    size_t n = 0, offset = 0, limit = MAX_LIMIT;
    struct listed *all;
    json_t *arr = json_array();
    int ok, running = wants_running(req, &ok);

    request_query(req, "metadata", meta, sizeof(meta));
    if (paginate && request_query(req, "limit", num, sizeof(num)) && *num)
        limit = (size_t)strtoul(num, NULL, 10);
    if (paginate && request_query(req, "nextToken", num, sizeof(num)) && *num)
        offset = (size_t)strtoul(num, NULL, 10);
    if (!ok || limit < 1 || limit > MAX_LIMIT) {
        json_decref(arr);
        respond_error(req, 400,
                      ok ? "limit: must be in [1, 1000]"
                         : "state: must be a comma-separated list of running, paused");
        return;
    }
    all = collect(req, meta, &n);
    if (!all) {
        json_decref(arr);
        respond_error(req, 503, "state store unavailable; retry shortly");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (running && i >= offset && i < offset + limit)
            json_array_append(arr, all[i].view);
        json_decref(all[i].view);
    }
    if (paginate && running && offset + limit < n) {
        snprintf(num, sizeof(num), "%zu", offset + limit);
        respond_add_header(req, "X-Next-Token", num);
    }
    snprintf(num, sizeof(num), "%zu", n);
    respond_add_header(req, "X-Total-Running", num);
    free(all);
    respond_json(req, 200, arr);
}

void h_e2b_list(struct request *req)
{
    list(req, 0);
}

void h_e2b_list_v2(struct request *req)
{
    list(req, 1);
}

/* Templates offered by live workers of the caller's pool and of the fleet. */
void h_e2b_templates(struct request *req)
{
    static const char *const pools_fmt = "corral:{ws:%s}:workers";
    const char *pools[2] = {req->cred.ws, ""};
    json_t *seen = json_object(), *out = json_array(), *v;
    const char *name;

    for (int p = 0; p < 2; p++) {
        char zkey[128];
        redisReply *ids;
        snprintf(zkey, sizeof(zkey), pools_fmt, pools[p]);
        ids = rconn_cmd(req->rc, 0, "ZRANGE %s 0 -1", zkey);
        for (size_t i = 0; ids && i < ids->elements; i++) {
            char wkey[160];
            redisReply *t;
            snprintf(wkey, sizeof(wkey), K_WORKER, pools[p], ids->element[i]->str);
            t = rconn_cmd(req->rc, 0, "HGET %s templates_json", wkey);
            json_t *list = reply_str(t) ? json_loads(reply_str(t), 0, NULL) : NULL;
            size_t k;
            json_array_foreach(list, k, v)
            {
                json_object_set(seen, json_string_value(v), json_true());
            }
            json_decref(list);
            if (t)
                freeReplyObject(t);
        }
        if (ids)
            freeReplyObject(ids);
    }
    json_object_foreach(seen, name, v)
    {
        json_array_append_new(out, json_pack("{s:s, s:s, s:[s], s:b, s:s, s:s, s:i, s:i}",
                                             "templateID", name, "buildID", name, "aliases", name,
                                             "public", 1, "buildStatus", "ready", "envdVersion",
                                             E2B_ENVD_VERSION, "cpuCount", 1, "memoryMB", 512));
    }
    json_decref(seen);
    respond_json(req, 200, out);
}
