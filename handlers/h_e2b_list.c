/* E2B listing: GET /v2/sandboxes (the spec's filters and order, pagination by
 * an X-Next-Token cursor) and the deprecated GET /sandboxes (metadata only).
 * Live sandboxes are listed, as E2B's two states: running, and paused (which
 * includes one being paused; decision 0044). */
#include "e2b_list_query.h"
#include "e2b_view.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_list_parse.h"
#include "sandbox_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct listed {
    json_t *view;
    struct e2b_listed_key key;
};

/* qsort has no context argument; one list is sorted at a time per thread. */
static _Thread_local const struct e2b_list_query *sorting;

static int in_order(const void *a, const void *b)
{
    return e2b_listed_cmp(sorting, &((const struct listed *)a)->key,
                          &((const struct listed *)b)->key);
}

/* 1 when a live record passes the query's filters. */
static int keep(const struct e2b_list_query *q, const struct sandbox_record *rec,
                const json_t *view)
{
    if (!(sandbox_is_running(rec) || rec->state == SANDBOX_STATE_RESUMING
              ? q->want_running
              : sandbox_is_paused(rec) && q->want_paused))
        return 0;
    if (rec->started_at < q->started_after)
        return 0;
    if (*q->template_name && strcmp(rec->template_id, q->template_name) != 0)
        return 0;
    return !*q->metadata || metadata_matches(json_object_get(view, "metadata"), q->metadata);
}

/* The caller's running sandboxes passing q, in q's order; NULL if Redis fails. */
static struct listed *collect(struct request *req, const struct e2b_list_query *q, size_t *n)
{
    struct sandbox_list all;
    struct listed *out;

    if (sandbox_list_read(req->rc, req->cred.ws, SANDBOX_STATE_ANY, &all) != 0)
        return NULL;
    out = calloc(all.n + 1, sizeof(*out));
    *n = 0;
    for (size_t i = 0; out && i < all.n; i++) {
        json_t *view = e2b_view(&all.items[i], E2B_LISTED, req->conf);
        if (keep(q, &all.items[i], view))
            out[(*n)++] = (struct listed){
                view,
                {all.items[i].started_at, json_string_value(json_object_get(view, "sandboxID"))}};
        else
            json_decref(view);
    }
    sandbox_list_free(&all);
    sorting = q;
    if (out)
        qsort(out, *n, sizeof(*out), in_order);
    return out;
}

/* The page after q's cursor; X-Next-Token names its last item when more follow. */
static json_t *page(struct request *req, const struct e2b_list_query *q, struct listed *all,
                    size_t n)
{
    json_t *arr = json_array();
    const struct e2b_listed_key *last = NULL;
    int more = 0;
    char token[64];

    for (size_t i = 0; i < n; i++) {
        if (!e2b_after_cursor(q, &all[i].key))
            continue;
        if (json_array_size(arr) == q->limit) {
            more = 1;
            break;
        }
        json_array_append(arr, all[i].view);
        last = &all[i].key;
    }
    if (more && last) {
        e2b_cursor_format(last, token, sizeof(token));
        respond_add_header(req, "X-Next-Token", token);
    }
    return arr;
}

static void list(struct request *req, int paginate)
{
    struct e2b_list_query q;
    char msg[160], num[24];
    size_t n = 0;
    struct listed *all;
    json_t *arr;

    if (e2b_list_query_parse(req, paginate, &q, msg, sizeof(msg)) != 0) {
        respond_error(req, 400, "%s", msg);
        return;
    }
    if (!paginate)
        q.want_paused = 0; /* the old listing is "all running sandboxes" */
    all = collect(req, &q, &n);
    if (!all) {
        respond_store_down(req);
        return;
    }
    arr = page(req, &q, all, n);
    for (size_t i = 0; i < n; i++)
        json_decref(all[i].view);
    free(all);
    snprintf(num, sizeof(num), "%zu", n);
    respond_add_header(req, "X-Total-Running", num);
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
