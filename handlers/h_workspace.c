/* GET/PATCH /v1/workspace: the caller's own workspace, nothing else. Its limits
 * (names, ranges, defaults, ceiling keys) are the one table ws_limit_defs in
 * accounts.c; the operator's ceilings over them are corral.conf's (decision 0063). */
#include "admission.h"
#include "handlers.h"
#include "respond.h"

#include <stdio.h>
#include <string.h>

/* {name: ceiling} for every limit: what an owner may still raise each to. */
static json_t *ceilings_json(const long ceilings[WS_LIMIT_COUNT])
{
    json_t *o = json_object();

    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        json_object_set_new(o, ws_limit_defs[i].name, json_integer(ceilings[i]));
    return o;
}

void h_workspace_get(struct request *req)
{
    char name[128];
    long limits[WS_LIMIT_COUNT], active;
    json_t *o;

    active = admission_count(req->rc, req->cred.ws);
    if (active < 0 || workspace_info(req->rc, req->cred.ws, name, sizeof(name), limits) != 0) {
        respond_store_down(req);
        return;
    }
    /* A limit set before the operator lowered its ceiling: creates get the
     * ceiling, so that is what is shown. */
    ws_limits_cap(limits, req->conf->ceilings);
    o = json_pack("{s:s, s:s, s:I, s:s, s:o}", "id", req->cred.ws, "name", name, "active_sandboxes",
                  (json_int_t)active, "role", role_name(req->role), "ceilings",
                  ceilings_json(req->conf->ceilings));
    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        json_object_set_new(o, ws_limit_defs[i].name, json_integer(limits[i]));
    respond_json(req, 200, o);
}

static int limit_index(const char *name)
{
    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        if (strcmp(name, ws_limit_defs[i].name) == 0)
            return i;
    return -1;
}

/* Fills limits/set from the body, each within its range and its ceiling; 0, or
 * -1 with err naming the field (the caller then stores nothing of the body). */
static int parse_limits(const json_t *body, const long ceilings[WS_LIMIT_COUNT],
                        long limits[WS_LIMIT_COUNT], int set[WS_LIMIT_COUNT], char *err,
                        size_t errlen)
{
    const char *k;
    json_t *v;
    int i;

    json_object_foreach((json_t *)body, k, v)
    {
        if ((i = limit_index(k)) < 0) {
            snprintf(err, errlen, "%.64s: unknown or read-only field", k);
            return -1;
        }
        if (!json_is_integer(v)) {
            snprintf(err, errlen, "%s: must be an integer in [%ld, %ld]", k, ws_limit_defs[i].min,
                     ws_limit_defs[i].max);
            return -1;
        }
        if (ws_limit_check((enum ws_limit)i, (long long)json_integer_value(v), ceilings[i], err,
                           errlen) != 0)
            return -1;
        limits[i] = (long)json_integer_value(v);
        set[i] = 1;
    }
    return 0;
}

void h_workspace_patch(struct request *req)
{
    json_t *body = request_json_body(req);
    long limits[WS_LIMIT_COUNT] = {0};
    int set[WS_LIMIT_COUNT] = {0}, rv;
    char err[160];

    if (!body)
        return;
    rv = parse_limits(body, req->conf->ceilings, limits, set, err, sizeof(err));
    json_decref(body);
    if (rv != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (workspace_limits_set(req->rc, req->cred.ws, limits, set) != 0) {
        respond_store_down(req);
        return;
    }
    h_workspace_get(req);
}
