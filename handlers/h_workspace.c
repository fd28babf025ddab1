/* GET/PATCH /v1/workspace: the caller's own workspace, nothing else. */
#include "admission.h"
#include "handlers.h"
#include "keys.h"
#include "respond.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void h_workspace_get(struct request *req)
{
    char key[128];
    redisReply *r;
    long active;

    snprintf(key, sizeof(key), K_WS_INFO, req->cred.ws);
    r = rconn_cmd(req->rc, 0, "HMGET %s name max_concurrent", key);
    active = admission_count(req->rc, req->cred.ws);
    if (!r || active < 0) {
        if (r)
            freeReplyObject(r);
        respond_error(req, 503, "state store unavailable; retry shortly");
        return;
    }
    respond_json(req, 200,
                 json_pack("{s:s, s:s, s:I, s:I, s:s}", "id", req->cred.ws, "name",
                           reply_str(r->element[0]) ? reply_str(r->element[0]) : "",
                           "max_concurrent_sandboxes", (json_int_t)reply_int(r->element[1], 20),
                           "active_sandboxes", (json_int_t)active, "role", role_name(req->role)));
    freeReplyObject(r);
}

void h_workspace_patch(struct request *req)
{
    json_t *body = request_json_body(req), *v;
    const char *k;
    char key[128];
    redisReply *r;

    if (!body)
        return;
    json_object_foreach(body, k, v)
    {
        if (strcmp(k, "max_concurrent_sandboxes") != 0) {
            respond_error(req, 400, "%.64s: unknown or read-only field", k);
            json_decref(body);
            return;
        }
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 100000) {
            respond_error(req, 400, "max_concurrent_sandboxes: must be an integer in [0, 100000]");
            json_decref(body);
            return;
        }
    }
    v = json_object_get(body, "max_concurrent_sandboxes");
    snprintf(key, sizeof(key), K_WS_INFO, req->cred.ws);
    r = v ? rconn_cmd(req->rc, 0, "HSET %s max_concurrent %lld", key,
                      (long long)json_integer_value(v))
          : NULL;
    json_decref(body);
    if (v && !r) {
        respond_error(req, 503, "state store unavailable; retry shortly");
        return;
    }
    if (r)
        freeReplyObject(r);
    h_workspace_get(req);
}
