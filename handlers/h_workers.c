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

/* The fleet's free capacity: its live workers and what they may still take
 * (slots, cpu_cores, memory_mb), in one script. Totals only: a tenant learns
 * no other tenant's machines. The cpu goes back as text (Lua numbers become
 * integers in a Redis reply). */
struct fleet_free {
    long alive, slots, memory_mb;
    double cpu_cores;
};

static int fleet_free(struct request *req, struct fleet_free *f)
{
    char key[128];
    redisReply *r;
    int ok;

    snprintf(key, sizeof(key), K_WORKERS, "");
    r = rconn_cmd(req->rc, 0, "EVAL %s 1 %s",
                  "local n, s, c, m = 0, 0, 0, 0 "
                  "local function num(x) return tonumber(x) or 0 end "
                  "for _, w in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do "
                  "local v = redis.call('HMGET', 'corral:{ws:}:worker:' .. w, 'slots', 'used', "
                  "'cpu', 'cpu_used', 'mem', 'mem_used') "
                  "n = n + 1 s = s + math.max(0, num(v[1]) - num(v[2])) "
                  "c = c + math.max(0, num(v[3]) - num(v[4])) "
                  "m = m + math.max(0, num(v[5]) - num(v[6])) end "
                  "return {n, s, string.format('%.3f', c), m}",
                  key);
    ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 4 &&
         r->element[2]->type == REDIS_REPLY_STRING;
    if (ok) {
        f->alive = (long)r->element[0]->integer;
        f->slots = (long)r->element[1]->integer;
        f->cpu_cores = atof(r->element[2]->str);
        f->memory_mb = (long)r->element[3]->integer;
    }
    if (r)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

void h_workers_list(struct request *req)
{
    struct fleet_free f;
    json_t *own = own_workers(req);

    if (!own || fleet_free(req, &f) != 0) {
        json_decref(own);
        respond_store_down(req);
        return;
    }
    respond_json(req, 200,
                 json_pack("{s:o, s:{s:I, s:I, s:f, s:I}}", "workers", own, "fleet", "workers",
                           (json_int_t)f.alive, "free_slots", (json_int_t)f.slots, "free_cpu_cores",
                           f.cpu_cores, "free_memory_mb", (json_int_t)f.memory_mb));
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
        respond_store_down(req);
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
