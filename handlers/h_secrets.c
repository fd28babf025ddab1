/* E2B's /secrets (decision 0090): a workspace's secrets, by id (sec_...) or
 * by name, for its members. Another workspace's secret is "not found", as a
 * missing one. A value goes in with a create or an update and never comes
 * out of any of these routes: every answer is the record's metadata. */
#include "respond.h"
#include "sandbox_view.h"
#include "secret_store.h"
#include "secrets_parse.h"
#include "secrets_routes.h"

#include <stdlib.h>

/* E2B's Secret. */
static json_t *view(const struct secret_record *s)
{
    json_t *meta = json_loads(s->metadata ? s->metadata : "{}", 0, NULL);

    return json_pack("{s:s, s:s, s:I, s:o, s:o, s:o}", "secretID", s->id, "name", s->name,
                     "currentVersion", (json_int_t)s->version, "metadata",
                     json_is_object(meta) ? meta : (json_decref(meta), json_object()), "createdAt",
                     format_time_json(s->created_at), "updatedAt", format_time_json(s->updated_at));
}

static void answer(struct request *req, int found, int status, struct secret_record *s)
{
    if (found < 0)
        respond_store_down(req);
    else if (found == 0)
        respond_error(req, 404, "secret not found");
    else
        respond_json(req, status, view(s));
    secret_record_free(s);
}

/* The body of a create or an update, checked; NULL after answering. */
static json_t *body_of(struct request *req, int create, struct secret_body *b)
{
    json_t *body = request_json_body(req);
    char err[160];

    if (body && secret_body_parse(body, create, b, err, sizeof(err)) != 0) {
        json_decref(body);
        respond_error(req, 400, "%s", err);
        return NULL;
    }
    return body;
}

void h_secret_create(struct request *req)
{
    struct secret_body b;
    struct secret_record s = {0};
    json_t *body = body_of(req, 1, &b);
    int made;

    if (!body)
        return;
    made = secret_create(req->rc, req->cred.ws, req->conf->server_secret, b.name, b.value,
                         b.metadata ? b.metadata : "{}", req->actor, &s);
    if (made == 0)
        respond_error(req, 409, "a secret named '%s' already exists", b.name);
    else
        answer(req, made, 201, &s);
    secret_body_free(&b);
    json_decref(body);
}

void h_secret_update(struct request *req)
{
    char ref[SECRET_NAME_MAX + 1];
    struct secret_body b;
    struct secret_record s = {0};
    json_t *body;

    /* The ref first: a secret that cannot exist is 404 whatever the body. */
    if (secret_ref_parse(req->params[0], ref) != 0) {
        respond_error(req, 404, "secret not found");
        return;
    }
    if (!(body = body_of(req, 0, &b)))
        return;
    answer(req,
           secret_update(req->rc, req->cred.ws, req->conf->server_secret, ref, b.value, b.metadata,
                         req->actor, &s),
           200, &s);
    secret_body_free(&b);
    json_decref(body);
}

void h_secret_get(struct request *req)
{
    char ref[SECRET_NAME_MAX + 1];
    struct secret_record s = {0};

    if (secret_ref_parse(req->params[0], ref) != 0)
        answer(req, 0, 200, &s);
    else
        answer(req, secret_find(req->rc, req->cred.ws, ref, &s), 200, &s);
}

void h_secret_delete(struct request *req)
{
    char ref[SECRET_NAME_MAX + 1];

    respond_change(req,
                   secret_ref_parse(req->params[0], ref) != 0
                       ? 0
                       : secret_delete(req->rc, req->cred.ws, ref, req->actor),
                   "secret");
}

/* A page, oldest first; X-Next-Token names the last one when more follow. */
void h_secrets_list(struct request *req)
{
    char after[SECRET_ID_MAX], err[128];
    struct secret_record *v = NULL;
    size_t limit, n = 0;
    int more = 0, found;
    json_t *arr;

    if (secret_list_query_parse(req, &limit, after, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    found = secret_list(req->rc, req->cred.ws, after, limit, &v, &n, &more);
    if (found <= 0) {
        if (found < 0)
            respond_store_down(req);
        else
            respond_error(req, 400, "nextToken: not a token this list answered");
        return;
    }
    arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, view(&v[i]));
    if (more && n > 0)
        respond_add_header(req, "X-Next-Token", v[n - 1].id);
    secret_list_free(v, n);
    respond_json(req, 200, arr);
}
