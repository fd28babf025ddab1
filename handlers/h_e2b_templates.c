/* E2B templates: GET /templates and GET /templates/aliases/{alias}. A template
 * is what a live worker of the caller's pool or of the fleet offers; its ID and
 * its alias are both its name, and every one is public to the workspace. */
#include "e2b_spec.h"
#include "handlers.h"
#include "respond.h"
#include "worker_store.h"

void h_e2b_templates(struct request *req)
{
    json_t *seen = worker_templates_offered(req->rc, req->cred.ws), *out = json_array(), *v;
    const char *name;

    json_object_foreach(seen, name, v)
    {
        json_array_append_new(out, json_pack("{s:s, s:s, s:[s], s:b, s:s, s:s, s:i, s:i}",
                                             "templateID", name, "buildID", name, "aliases", name,
                                             "public", 1, "buildStatus", "ready", "envdVersion",
                                             E2B_ENVD_VERSION, "cpuCount", 1, "memoryMB", 512));
    }
    json_decref(seen);
    respond_json(req, 200, out);
}

/* The spec's TemplateAliasResponse; Template.exists() reads only the status. */
void h_e2b_template_alias(struct request *req)
{
    json_t *seen = worker_templates_offered(req->rc, req->cred.ws);
    const char *alias = req->params[0];

    if (json_object_get(seen, alias))
        respond_json(req, 200, json_pack("{s:s, s:b}", "templateID", alias, "public", 1));
    else
        respond_error(req, 404, "template alias not found");
    json_decref(seen);
}
