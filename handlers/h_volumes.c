/* Volumes (decision 0049): E2B's /volumes (create, list, get, delete) and the
 * native /v1/volumes. A volume belongs to its workspace: another one's is
 * "not found". Mounted by creates through volumeMounts / volume_mounts. */
#include "handlers.h"
#include "respond.h"
#include "sandbox_view.h"
#include "server.h"
#include "volume.h"

#include <stdlib.h>
#include <string.h>

static json_t *view(const struct volume_record *v, int e2b)
{
    char when[40];

    format_time_ms(v->created_at, when, sizeof(when));
    if (e2b)
        return json_pack("{s:s, s:s}", "volumeID", v->id, "name", v->name);
    return json_pack("{s:s, s:s, s:s, s:s}", "volume_id", v->id, "name", v->name, "worker_id",
                     v->worker, "created_at", when);
}

static void create(struct request *req, int e2b)
{
    json_t *body = request_json_body(req);
    const char *name = json_string_value(json_object_get(body, "name"));
    struct volume_record v;
    struct sched_error err;

    if (!body)
        return;
    if (!volume_name_ok(name)) {
        json_decref(body);
        respond_error(req, 400,
                      "name: 1-64 characters [A-Za-z0-9._-], starting with a letter "
                      "or digit");
        return;
    }
    if (volume_create(req->rc, &req->thread->srv->sched, req->cred.ws, name, req->actor, &v,
                      &err) != 0)
        respond_error(req, err.status, "%s", err.message);
    else
        respond_json(req, 201, view(&v, e2b));
    json_decref(body);
}

static void list(struct request *req, int e2b)
{
    struct volume_record *v;
    size_t n;
    json_t *arr;

    if (volume_list(req->rc, req->cred.ws, &v, &n) != 0) {
        respond_store_down(req);
        return;
    }
    arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, view(&v[i], e2b));
    free(v);
    respond_json(req, 200, e2b ? arr : json_pack("{s:o}", "volumes", arr));
}

static void get(struct request *req, int e2b)
{
    struct volume_record v;
    int found =
        volume_id_ok(req->params[0]) ? volume_read(req->rc, req->cred.ws, req->params[0], &v) : 0;

    if (found < 0)
        respond_store_down(req);
    else if (found == 0)
        respond_error(req, 404, "volume not found");
    else
        respond_json(req, 200, view(&v, e2b));
}

static void delete (struct request *req)
{
    int n = volume_id_ok(req->params[0])
                ? volume_delete(req->rc, req->cred.ws, req->params[0], req->actor)
                : 0;

    if (n == 2)
        respond_error(req, 409, "volume %s is mounted by a live sandbox; kill it first",
                      req->params[0]);
    else
        respond_change(req, n, "volume");
}

void h_e2b_volume_create(struct request *req)
{
    create(req, 1);
}

void h_e2b_volumes(struct request *req)
{
    list(req, 1);
}

void h_e2b_volume_get(struct request *req)
{
    get(req, 1);
}

void h_volume_create(struct request *req)
{
    create(req, 0);
}

void h_volumes(struct request *req)
{
    list(req, 0);
}

void h_volume_get(struct request *req)
{
    get(req, 0);
}

void h_volume_delete(struct request *req)
{
    delete (req);
}
