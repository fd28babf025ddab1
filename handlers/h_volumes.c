/* Volumes (decision 0049): E2B's /volumes (create, list, get, delete) and the
 * native /v1/volumes. A volume belongs to its workspace: another one's is
 * "not found". Mounted by creates through volumeMounts / volume_mounts.
 * E2B's create and get answer a VolumeAndToken: the token of the volume's
 * file API (volume_token.h, decision 0071) and, when corral.conf names one,
 * the domain whose api.<domain> serves it (the SDK's default is E2B's own). */
#include "clock.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_view.h"
#include "server.h"
#include "volume.h"
#include "volume_create_parse.h"
#include "volume_token.h"

#include <stdlib.h>
#include <string.h>

enum view_kind { NATIVE, E2B_VOLUME, E2B_WITH_TOKEN };

static json_t *view(const struct request *req, const struct volume_record *v, enum view_kind k)
{
    char when[40], token[VOLUME_TOKEN_MAX];
    json_t *o;

    format_time_ms(v->created_at, when, sizeof(when));
    if (k == NATIVE)
        return json_pack("{s:s, s:s, s:s, s:s}", "volume_id", v->id, "name", v->name, "worker_id",
                         v->worker, "created_at", when);
    o = json_pack("{s:s, s:s}", "volumeID", v->id, "name", v->name);
    if (k == E2B_WITH_TOKEN) {
        volume_token_mint(req->conf->server_secret, req->cred.ws, v->id,
                          clock_now_ms() / 1000 + VOLUME_TOKEN_TTL_S, token);
        json_object_set_new(o, "token", json_string(token));
        if (req->conf->domain[0])
            json_object_set_new(o, "domain", json_string(req->conf->domain));
    }
    return o;
}

static void create(struct request *req, int e2b)
{
    json_t *body = request_json_body(req);
    const char *name;
    struct volume_record v;
    struct sched_error err;
    char why[128];

    if (!body)
        return;
    if (volume_create_parse(body, &name, why, sizeof(why)) != 0) {
        json_decref(body);
        respond_error(req, 400, "%s", why);
        return;
    }
    if (volume_create(req->rc, &req->thread->srv->sched, req->cred.ws, name, req->actor, &v,
                      &err) != 0)
        respond_error(req, err.status, "%s", err.message);
    else
        respond_json(req, 201, view(req, &v, e2b ? E2B_WITH_TOKEN : NATIVE));
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
        json_array_append_new(arr, view(req, &v[i], e2b ? E2B_VOLUME : NATIVE));
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
        respond_json(req, 200, view(req, &v, e2b ? E2B_WITH_TOKEN : NATIVE));
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
