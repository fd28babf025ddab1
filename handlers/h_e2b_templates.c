/* E2B templates: GET /templates, GET /templates/{id}, GET
 * /templates/aliases/{alias}, DELETE /templates/{id}, PATCH
 * /v2/templates/{id}. The caller sees its workspace's own templates (built
 * through the Template API, docs/templates.md) and the fleet's configured
 * ones (what a live worker of its pool or of the fleet offers, public to
 * every workspace: their id and alias are their name). Another workspace's
 * template is "not found", as an absent one. */
#include "e2b_spec.h"
#include "handlers.h"
#include "log.h"
#include "registry_gc.h"
#include "respond.h"
#include "sandbox_view.h"
#include "snapshot.h"
#include "template.h"
#include "template_store.h"
#include "worker_store.h"

#include <stdlib.h>
#include <string.h>

static json_t *fleet_view(const char *name)
{
    return json_pack("{s:s, s:s, s:[s], s:[s], s:b, s:s, s:s, s:i, s:i, s:i}", "templateID", name,
                     "buildID", name, "aliases", name, "names", name, "public", 1, "buildStatus",
                     "ready", "envdVersion", E2B_ENVD_VERSION, "cpuCount", 1, "memoryMB", 512,
                     "diskSizeMB", 0);
}

static json_t *own_view(const struct template_record *t)
{
    return json_pack("{s:s, s:s, s:[s], s:[s], s:b, s:s, s:s, s:I, s:I, s:i, s:o, s:o, s:n, "
                     "s:n, s:i, s:I}",
                     "templateID", t->id, "buildID", t->build, "aliases", t->name, "names", t->name,
                     "public", t->public_, "buildStatus", *t->build ? "ready" : "waiting",
                     "envdVersion", E2B_ENVD_VERSION, "cpuCount", (json_int_t)(t->cpu ? t->cpu : 2),
                     "memoryMB", (json_int_t)(t->memory_mb ? t->memory_mb : 1024), "diskSizeMB", 0,
                     "createdAt", format_time_json(t->created_at), "updatedAt",
                     format_time_json(t->updated_at), "createdBy", "lastSpawnedAt", "spawnCount", 0,
                     "buildCount", (json_int_t)t->build_count);
}

void h_e2b_templates(struct request *req)
{
    json_t *seen = worker_templates_offered(req->rc, req->cred.ws), *out = json_array(), *v;
    struct template_record *own = NULL;
    size_t n = 0;
    const char *name;

    if (template_list(req->rc, req->cred.ws, &own, &n) != 0) {
        json_decref(seen);
        json_decref(out);
        respond_store_down(req);
        return;
    }
    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, own_view(&own[i]));
    json_object_foreach(seen, name, v)
    {
        json_array_append_new(out, fleet_view(name));
    }
    free(own);
    json_decref(seen);
    respond_json(req, 200, out);
}

/* The spec's TemplateAliasResponse; Template.exists() reads only the status. */
void h_e2b_template_alias(struct request *req)
{
    json_t *seen = worker_templates_offered(req->rc, req->cred.ws);
    const char *alias = req->params[0];
    struct template_record t;
    int found = template_find(req->rc, req->cred.ws, alias, &t);

    if (found < 0)
        respond_store_down(req);
    else if (found)
        respond_json(req, 200, json_pack("{s:s, s:b}", "templateID", t.id, "public", t.public_));
    else if (json_object_get(seen, alias))
        respond_json(req, 200, json_pack("{s:s, s:b}", "templateID", alias, "public", 1));
    else
        respond_error(req, 404, "template alias not found");
    json_decref(seen);
}

static json_t *builds_view(struct request *req, const struct template_record *t)
{
    struct build_record *b = NULL;
    size_t n = 0;
    json_t *out = json_array();

    if (build_list(req->rc, req->cred.ws, t->id, &b, &n) != 0)
        return out;
    for (size_t i = 0; i < n; i++) {
        json_t *one = json_pack("{s:s, s:s, s:o, s:o, s:I, s:I, s:s}", "buildID", b[i].id, "status",
                                b[i].state_text, "createdAt", format_time_json(b[i].created_at),
                                "updatedAt", format_time_json(b[i].updated_at), "cpuCount",
                                (json_int_t)(b[i].cpu ? b[i].cpu : 2), "memoryMB",
                                (json_int_t)(b[i].memory_mb ? b[i].memory_mb : 1024), "envdVersion",
                                E2B_ENVD_VERSION);
        if (b[i].finished_at)
            json_object_set_new(one, "finishedAt", format_time_json(b[i].finished_at));
        json_array_append_new(out, one);
    }
    free(b);
    return out;
}

/* TemplateWithBuilds. */
void h_e2b_template_get(struct request *req)
{
    struct template_record t;
    int found = template_find(req->rc, req->cred.ws, req->params[0], &t);
    json_t *out;

    if (found <= 0) {
        if (found < 0)
            respond_store_down(req);
        else
            respond_error(req, 404, "template '%s' not found", req->params[0]);
        return;
    }
    out = own_view(&t);
    json_object_set_new(out, "builds", builds_view(req, &t));
    respond_json(req, 200, out);
}

void h_e2b_template_delete(struct request *req)
{
    struct template_record t;
    int found;

    if (snapshot_id_ok(req->params[0])) {
        respond_change(req, snapshot_delete(req->rc, req->cred.ws, req->params[0], req->actor),
                       "snapshot");
        return;
    }
    found = template_find(req->rc, req->cred.ws, req->params[0], &t);
    if (found == 1 && req->role != ROLE_OWNER) {
        respond_error(req, 403, "only the workspace's owner deletes templates");
        return;
    }
    if (found == 1 && (found = template_remove(req->rc, req->cred.ws, t.id)) == 1) {
        char err[300];
        template_images_forget(req->rc, req->cred.ws, req->conf->registry, t.id);
        /* Its tags leave the registry now; what fails here, corralctl
         * registry-gc deletes later (decision 0081). */
        if (registry_template_forget(req->conf, req->cred.ws, t.id, err, sizeof(err)) != 0)
            log_warn("template %s: its registry manifests stay until registry-gc: %s", t.id, err);
    }
    respond_change(req, found, "template");
}

/* Publishing to every workspace is the operator's (fleet templates): a
 * workspace's template stays its own. */
void h_e2b_template_patch(struct request *req)
{
    struct template_record t;
    json_t *body = request_json_body(req), *pub;
    int found;

    if (!body)
        return;
    pub = json_object_get(body, "public");
    found = template_find(req->rc, req->cred.ws, req->params[0], &t);
    if (found <= 0)
        respond_change(req, found, "template");
    else if (pub && !json_is_boolean(pub))
        respond_error(req, 400, "public: must be a boolean");
    else if (json_is_true(pub))
        respond_error(req, 403,
                      "a workspace's template cannot be made public to every "
                      "workspace; the operator publishes fleet templates");
    else if (template_set_public(req->rc, req->cred.ws, t.id, 0) != 0)
        respond_store_down(req);
    else
        respond_json(req, 200, json_pack("{s:[s]}", "names", t.name));
    json_decref(body);
}
