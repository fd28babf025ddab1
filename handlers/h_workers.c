/* GET /v1/workers: the caller's own workers, and of the unscoped fleet only a
 * count (a tenant must not learn other tenants' machines). DELETE: owner only,
 * own workers only; the worker is declared dead at once. */
#include "handlers.h"
#include "keys.h"
#include "lifecycle.h"
#include "respond.h"
#include "worker_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *own_workers(struct request *req)
{
    char key[128];
    redisReply *ids = NULL, *rec;
    json_t *list = json_array();

    snprintf(key, sizeof(key), K_WORKERS_ALL, req->cred.ws);
    ids = rconn_cmd(req->rc, 0, "SMEMBERS %s", key);
    if (!ids) {
        json_decref(list);
        return NULL;
    }
    for (size_t i = 0; i < ids->elements; i++) {
        snprintf(key, sizeof(key), K_WORKER, req->cred.ws, ids->element[i]->str);
        rec = rconn_cmd(req->rc, 0, "HGETALL %s", key);
        if (rec && rec->elements > 0)
            json_array_append_new(list, worker_view(rec, ids->element[i]->str));
        if (rec)
            freeReplyObject(rec);
    }
    freeReplyObject(ids);
    return list;
}

/* Free slots over the fleet's live workers, in one script. */
static long fleet_free_slots(struct request *req, long *alive)
{
    char key[128];
    redisReply *r;
    long free_slots = -1;

    snprintf(key, sizeof(key), K_WORKERS, "");
    r = rconn_cmd(req->rc, 0, "EVAL %s 1 %s",
                  "local n, free = 0, 0 "
                  "for _, w in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do "
                  "local v = redis.call('HMGET', 'corral:{ws:}:worker:' .. w, 'slots', 'used') "
                  "n = n + 1 free = free + math.max(0, tonumber(v[1]) - tonumber(v[2])) end "
                  "return {n, free}",
                  key);
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        *alive = (long)r->element[0]->integer;
        free_slots = (long)r->element[1]->integer;
    }
    if (r)
        freeReplyObject(r);
    return free_slots;
}

void h_workers_list(struct request *req)
{
    long alive = 0, free_slots;
    json_t *own = own_workers(req);

    free_slots = own ? fleet_free_slots(req, &alive) : -1;
    if (!own || free_slots < 0) {
        json_decref(own);
        respond_error(req, 503, "state store unavailable; retry shortly");
        return;
    }
    respond_json(req, 200,
                 json_pack("{s:o, s:{s:I, s:I}}", "workers", own, "fleet", "workers",
                           (json_int_t)alive, "free_slots", (json_int_t)free_slots));
}

void h_worker_delete(struct request *req)
{
    const char *wid = req->params[0];
    char key[160], set[128];
    redisReply *r;
    int removed;

    snprintf(set, sizeof(set), K_WORKERS_ALL, req->cred.ws);
    r = token_is_id(wid) ? rconn_cmd(req->rc, 0, "SREM %s %s", set, wid) : NULL;
    if (token_is_id(wid) && !r) {
        respond_error(req, 503, "state store unavailable; retry shortly");
        return;
    }
    removed = r && reply_int(r, 0) == 1;
    if (r)
        freeReplyObject(r);
    if (!removed) {
        respond_error(req, 404, "worker not found");
        return;
    }
    worker_declare_dead(req->rc, &req->thread->srv->sched, req->cred.ws, wid, 1);
    /* Deleted for good: its secret stops working; a handshake makes a new worker. */
    snprintf(key, sizeof(key), K_WORKER, req->cred.ws, wid);
    r = rconn_cmd(req->rc, 0, "DEL %s", key);
    if (r)
        freeReplyObject(r);
    respond_empty(req, 204);
}
