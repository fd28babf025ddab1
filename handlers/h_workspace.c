/* GET/PATCH /v1/workspace: the caller's own workspace, nothing else. Its limits
 * (names, ranges, defaults, ceiling keys) are the one table ws_limit_defs in
 * accounts.c; the operator's ceilings over them are corral.conf's (decision 0063). */
#include "admission.h"
#include "handlers.h"
#include "respond.h"
#include "workspace_limits_parse.h"

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

void h_workspace_patch(struct request *req)
{
    json_t *body = request_json_body(req);
    long limits[WS_LIMIT_COUNT] = {0};
    int set[WS_LIMIT_COUNT] = {0}, rv;
    char err[160];

    if (!body)
        return;
    rv = workspace_limits_parse(body, req->conf->ceilings, limits, set, err, sizeof(err));
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
