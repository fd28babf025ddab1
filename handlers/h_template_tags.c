/* E2B's template tags: POST /templates/tags {target "name:tag", tags}, DELETE
 * /templates/tags {name, tags}, GET /templates/{id}/tags. A tag names one
 * build; Sandbox.create("name:tag") starts that build's image. */
#include "handlers.h"
#include "respond.h"
#include "sandbox_view.h"
#include "template.h"
#include "template_build_parse.h"

#include <string.h>

/* body's array `name` of tags, or NULL after answering 400. */
static json_t *tags_of(struct request *req, json_t *body)
{
    json_t *tags = json_object_get(body, "tags"), *t;
    size_t i;

    if (!json_is_array(tags) || json_array_size(tags) == 0 || json_array_size(tags) > 16) {
        respond_error(req, 400, "tags: must be an array of 1 to 16 tags");
        return NULL;
    }
    json_array_foreach(tags, i, t)
    {
        if (!template_tag_ok(json_string_value(t))) {
            respond_error(req, 400, "tags[%zu]: a tag is 1-63 of [A-Za-z0-9._-]", i);
            return NULL;
        }
    }
    return tags;
}

void h_template_tags_assign(struct request *req)
{
    json_t *body = request_json_body(req), *tags, *t;
    const char *target = json_string_value(json_object_get(body, "target"));
    struct template_record tpl;
    struct sched_error err = {0};
    char bid[TEMPLATE_ID_MAX] = "";
    size_t i;
    int found;

    if (!body)
        return;
    if (!target) {
        respond_error(req, 400, "target: the template as \"name:tag\" is required");
    } else if ((tags = tags_of(req, body))) {
        found = template_lookup(req->rc, req->cred.ws, target, &tpl, bid, &err);
        if (found <= 0)
            respond_error(req, err.status, "%s", err.message);
        else if (!*bid)
            respond_error(req, 409, "template '%s' has no ready build to tag", target);
        else {
            json_array_foreach(tags, i, t)
            {
                template_tag_set(req->rc, req->cred.ws, tpl.id, json_string_value(t), bid);
            }
            respond_json(req, 201, json_pack("{s:O, s:s}", "tags", tags, "buildID", bid));
        }
    }
    json_decref(body);
}

void h_template_tags_delete(struct request *req)
{
    json_t *body = request_json_body(req), *tags, *t;
    const char *name = json_string_value(json_object_get(body, "name"));
    struct template_record tpl;
    size_t i;
    int found;

    if (!body)
        return;
    if (!name)
        respond_error(req, 400, "name: the template's name is required");
    else if ((tags = tags_of(req, body))) {
        found = template_find(req->rc, req->cred.ws, name, &tpl);
        if (found <= 0)
            respond_change(req, found, "template");
        else {
            json_array_foreach(tags, i, t)
            {
                template_tag_remove(req->rc, req->cred.ws, tpl.id, json_string_value(t));
            }
            respond_empty(req, 204);
        }
    }
    json_decref(body);
}

void h_template_tags_list(struct request *req)
{
    struct template_record tpl;
    int found = template_find(req->rc, req->cred.ws, req->params[0], &tpl);
    json_t *tags, *t;
    size_t i;

    if (found <= 0) {
        respond_change(req, found, "template");
        return;
    }
    tags = template_tags(req->rc, req->cred.ws, tpl.id);
    if (!tags) {
        respond_store_down(req);
        return;
    }
    json_array_foreach(tags, i, t)
    {
        json_int_t ms = json_integer_value(json_object_get(t, "createdAt"));
        json_object_set_new(t, "createdAt", format_time_json(ms));
    }
    respond_json(req, 200, tags);
}
