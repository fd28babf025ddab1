/* GET /v1/workers: the caller's own workers, and of the unscoped fleet only a
 * count (a tenant must not learn other tenants' machines). DELETE: owner only,
 * own workers only; the worker is declared dead at once. */
#include "handlers.h"
#include "lifecycle.h"
#include "respond.h"
#include "worker_registry.h"
#include "worker_store.h"

#include <stdio.h>
#include <string.h>

static json_t *own_workers(struct request *req)
{
    struct worker_list l;
    json_t *list;

    if (worker_list(req->rc, req->cred.ws, WORKERS_ALL, &l) != 0)
        return NULL;
    list = json_array();
    for (size_t i = 0; i < l.n; i++)
        json_array_append_new(list, worker_view(&l.w[i]));
    worker_list_free(&l);
    return list;
}

void h_workers_list(struct request *req)
{
    struct worker_free f;
    json_t *own = own_workers(req);

    /* The fleet's free capacity in totals only: no other tenant's machines. */
    if (!own || worker_pool_free(req->rc, "", &f) != 0) {
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
    int removed = token_is_id(wid) ? worker_unlist(req->rc, req->cred.ws, wid) : 0;

    if (removed < 0) {
        respond_store_down(req);
        return;
    }
    if (!removed) {
        respond_error(req, 404, "worker not found");
        return;
    }
    audit_append(
        req->rc, req->cred.ws,
        &(struct audit_event){.event = AUDIT_WORKER_REMOVED, .actor = req->actor, .worker = wid});
    worker_declare_dead(req->rc, &req->thread->srv->sched, req->cred.ws, wid, 1, req->actor);
    /* Deleted for good: its secret stops working; a handshake makes a new worker. */
    worker_erase(req->rc, req->cred.ws, wid);
    respond_empty(req, 204);
}
