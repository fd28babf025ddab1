/* E2B templates: GET /templates and GET /templates/aliases/{alias}. A template
 * is what a live worker of the caller's pool or of the fleet offers; its ID and
 * its alias are both its name, and every one is public to the workspace. */
#include "e2b_spec.h"
#include "handlers.h"
#include "keys.h"
#include "respond.h"

#include <stdio.h>
#include <string.h>

/* The template names the live workers of the caller's pool and of the fleet
 * offer, as the keys of an object. */
static json_t *offered(struct request *req)
{
    const char *pools[2] = {req->cred.ws, ""};
    json_t *seen = json_object(), *v;

    for (int p = 0; p < 2; p++) {
        char zkey[128];
        redisReply *ids;
        snprintf(zkey, sizeof(zkey), K_WORKERS, pools[p]);
        ids = rconn_cmd(req->rc, 0, "ZRANGE %s 0 -1", zkey);
        for (size_t i = 0; ids && i < ids->elements; i++) {
            char wkey[160];
            redisReply *t;
            snprintf(wkey, sizeof(wkey), K_WORKER, pools[p], ids->element[i]->str);
            t = rconn_cmd(req->rc, 0, "HGET %s templates_json", wkey);
            json_t *list = reply_str(t) ? json_loads(reply_str(t), 0, NULL) : NULL;
            size_t k;
            json_array_foreach(list, k, v)
            {
                if (json_is_string(v))
                    json_object_set(seen, json_string_value(v), json_true());
            }
            json_decref(list);
            if (t)
                freeReplyObject(t);
        }
        if (ids)
            freeReplyObject(ids);
    }
    return seen;
}

void h_e2b_templates(struct request *req)
{
    json_t *seen = offered(req), *out = json_array(), *v;
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
    json_t *seen = offered(req);
    const char *alias = req->params[0];

    if (json_object_get(seen, alias))
        respond_json(req, 200, json_pack("{s:s, s:b}", "templateID", alias, "public", 1));
    else
        respond_error(req, 404, "template alias not found");
    json_decref(seen);
}
