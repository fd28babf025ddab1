/* GET /v1/internal/route/{id}: the data plane's one lookup (the nginx module's
 * subrequest). Reachable only through nginx's internal location, which sets the
 * FastCGI param CORRAL_GATEWAY_KEY; a client cannot set a FastCGI param, only
 * HTTP_* ones. See docs/data-plane.md. */
#include "handlers.h"
#include "keys.h"
#include "respond.h"
#include "sandbox_store.h"
#include "secret.h"

#include <stdio.h>
#include <string.h>

int internal_caller(struct request *req)
{
    const char *key = request_header(req, "CORRAL_GATEWAY_KEY");

    return key && secret_equal(req->conf->gateway_secret, key);
}

static int sandbox_workspace(struct request *req, const char *sbid, char ws[33])
{
    char key[96];
    redisReply *r;
    int found;

    snprintf(key, sizeof(key), K_SB_INDEX, sbid);
    r = rconn_cmd(req->rc, 0, "GET %s", key);
    if (!r)
        return -1;
    found = reply_str(r) != NULL;
    if (found)
        snprintf(ws, 33, "%s", reply_str(r));
    freeReplyObject(r);
    return found;
}

static void answer_route(struct request *req, const redisReply *sb, const char *sbid)
{
    char key[160];
    const char *pool = reply_hget(sb, "pool"), *wid = reply_hget(sb, "worker");
    redisReply *w;

    snprintf(key, sizeof(key), K_WORKER, pool ? pool : "", wid ? wid : "");
    w = rconn_cmd(req->rc, 0, "HMGET %s data_addr data_key state", key);
    if (!w) {
        respond_store_down(req);
        return;
    }
    if (!reply_str(w->element[0]) || !reply_str(w->element[1]) || !reply_str(w->element[2]) ||
        strcmp(reply_str(w->element[2]), "alive") != 0) {
        freeReplyObject(w);
        NOT_FOUND_SANDBOX(req);
        return;
    }
    respond_json(
        req, 200,
        json_pack(
            "{s:s, s:s, s:b, s:b, s:s}", "sandbox_id", sbid, "addr", reply_str(w->element[0]),
            "secure", strcmp(reply_hget(sb, "secure") ? reply_hget(sb, "secure") : "0", "1") == 0,
            "public", strcmp(reply_hget(sb, "public") ? reply_hget(sb, "public") : "1", "0") != 0,
            "worker_key", reply_str(w->element[1])));
    freeReplyObject(w);
}

void h_internal_route(struct request *req)
{
    const char *sbid = req->params[0];
    const char *state;
    char ws[33];
    redisReply *sb;
    int found, absent;

    if (!internal_caller(req)) {
        respond_error(req, 404, "no route %s %s", req->method, req->path);
        return;
    }
    found = token_is_id(sbid) ? sandbox_workspace(req, sbid, ws) : 0;
    sb = found == 1 ? sandbox_get(req->rc, ws, sbid, &absent) : NULL;
    if (found < 0 || (found == 1 && !sb && !absent)) {
        respond_store_down(req);
        return;
    }
    state = sb ? reply_hget(sb, "state") : NULL;
    if (!state || strcmp(state, "running") != 0)
        NOT_FOUND_SANDBOX(req);
    else
        answer_route(req, sb, sbid);
    if (sb)
        freeReplyObject(sb);
}
