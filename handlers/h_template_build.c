/* E2B's template build routes (docs/templates.md): POST /v3/templates, GET
 * /templates/{id}/files/{hash}, POST /v2/templates/{id}/builds/{bid}, GET
 * /templates/{id}/builds/{bid}/status. A template and its builds are read
 * only from the caller's workspace: another's is "not found". */
#include "clock.h"
#include "handlers.h"
#include "registry_names.h"
#include "respond.h"
#include "sandbox_store.h"
#include "sandbox_view.h"
#include "template.h"
#include "template_build_parse.h"
#include "upload_token.h"

#include <stdio.h>
#include <string.h>

#define BUILD_TIMEOUT_S 3600
#define BUILD_STEP_TIMEOUT_S 1200

void h_e2b_template_request(struct request *req)
{
    struct template_name_req n;
    struct template_record t;
    char bid[TEMPLATE_ID_MAX], err[200];
    json_t *body = request_json_body(req), *tags;
    int made;

    if (!body)
        return;
    if (template_name_parse(body, &n, err, sizeof(err)) != 0) {
        json_decref(body);
        respond_error(req, 400, "%s", err);
        return;
    }
    json_decref(body);
    made = template_get_or_make(req->rc, req->cred.ws, n.name, n.cpu, n.memory_mb,
                                req->conf->max_templates, &t);
    if (made == -2) {
        json_decref(n.tags);
        respond_error(req, 403,
                      "templates: the workspace has %ld, the operator's maximum "
                      "(max_templates)",
                      req->conf->max_templates);
        return;
    }
    if (made < 0 || build_make(req->rc, req->cred.ws, t.id, n.cpu ? n.cpu : t.cpu,
                               n.memory_mb ? n.memory_mb : t.memory_mb, bid) != 0) {
        json_decref(n.tags);
        respond_store_down(req);
        return;
    }
    tags = json_pack("[s]", n.tag);
    json_array_extend(tags, n.tags);
    json_decref(n.tags);
    /* The build's tags wait in its record until it is ready (recipe). */
    if (build_tags_stash(req->rc, req->cred.ws, bid, tags) != 0) {
        json_decref(tags);
        respond_store_down(req);
        return;
    }
    respond_json(req, 202,
                 json_pack("{s:s, s:s, s:b, s:[s], s:[s], s:o}", "templateID", t.id, "buildID", bid,
                           "public", t.public_, "names", t.name, "aliases", t.name, "tags", tags));
}

/* The caller's template by id (the SDK uses the id POST /v3 answered). */
static int own_template(struct request *req, const char *id, struct template_record *t)
{
    int found = template_id_ok(id) ? template_find(req->rc, req->cred.ws, id, t) : 0;

    if (found < 0)
        respond_store_down(req);
    else if (found == 0)
        respond_error(req, 404, "template '%s' not found", id);
    return found;
}

static void upload_url(struct request *req, const char *tpl, const char *hash, char *out,
                       size_t len)
{
    const char *host = request_header(req, "CORRAL_HOST"), *https = request_header(req, "HTTPS");
    char token[UPLOAD_TOKEN_MAX] = "";

    upload_token_mint(req->conf->server_secret, req->cred.ws, tpl, hash,
                      clock_now_ms() / 1000 + UPLOAD_TOKEN_TTL_S, token);
    snprintf(out, len, "%s://%s/templatefiles/%s?t=%s", https && *https ? "https" : "http",
             host ? host : "localhost", hash, token);
}

void h_e2b_template_files(struct request *req)
{
    struct template_record t;
    const char *hash = req->params[1];
    char url[600];
    int present;

    if (own_template(req, req->params[0], &t) != 1)
        return;
    if (!template_hash_ok(hash)) {
        respond_error(req, 400, "hash: must be the 64 hex digits of the files' SHA-256");
        return;
    }
    present = template_file_exists(req->rc, req->cred.ws, hash);
    if (present < 0) {
        respond_store_down(req);
        return;
    }
    if (present) {
        respond_json(req, 201, json_pack("{s:b}", "present", 1));
        return;
    }
    upload_url(req, t.id, hash, url, sizeof(url));
    respond_json(req, 201, json_pack("{s:b, s:s}", "present", 0, "url", url));
}

/* The caller's build bid of template t, still waiting for its steps. */
static int waiting_build(struct request *req, const struct template_record *t, const char *bid,
                         struct build_record *b)
{
    int found = build_id_ok(bid) ? build_read(req->rc, req->cred.ws, bid, b) : 0;

    if (found < 0) {
        respond_store_down(req);
        return -1;
    }
    if (found == 0 || strcmp(b->template_id, t->id) != 0) {
        respond_error(req, 404, "build '%s' of template '%s' not found", bid, t->id);
        return -1;
    }
    if (b->state != BUILD_STATE_WAITING) {
        respond_error(req, 409, "build '%s' is already %s", bid, b->state_text);
        return -1;
    }
    return 0;
}

/* Every COPY step's files were uploaded (or are still cached). */
static int files_present(struct request *req, json_t *steps)
{
    size_t i;
    json_t *st;

    json_array_foreach(steps, i, st)
    {
        const char *hash = json_string_value(json_object_get(st, "filesHash"));
        int present = hash ? template_file_exists(req->rc, req->cred.ws, hash) : 1;
        if (present < 0) {
            respond_store_down(req);
            return -1;
        }
        if (!present) {
            respond_error(req, 400, "steps[%zu]: the files of hash %s were not uploaded", i, hash);
            return -1;
        }
    }
    return 0;
}

static int target_of(struct request *req, const struct template_record *t, const char *bid,
                     char *out, size_t len)
{
    char repo[REGISTRY_REPO_MAX];

    if (!*req->conf->registry) {
        respond_error(req, 503, "template builds need a registry (corral.conf: registry)");
        return -1;
    }
    if (registry_repo(req->cred.ws, t->id, repo, sizeof(repo)) != 0) {
        respond_error(req, 500, "no registry name for template '%s'", t->id);
        return -1;
    }
    if ((size_t)snprintf(out, len, "%.100s/%s:%s", req->conf->registry, repo, bid) >= len) {
        respond_error(req, 500, "the registry's name is too long");
        return -1;
    }
    return 0;
}

/* A build lives as long as a sandbox may (the operator's maximum), at most
 * BUILD_TIMEOUT_S. */
static long build_timeout_s(const struct server *srv)
{
    long max = srv->sched.ceilings[WS_LIMIT_TIMEOUT];

    return max > 0 && max < BUILD_TIMEOUT_S ? max : BUILD_TIMEOUT_S;
}

static void start_build(struct request *req, const struct template_record *t,
                        const struct build_record *b, const struct template_build_req *p)
{
    struct server *srv = req->thread->srv;
    char target[TEMPLATE_IMAGE_MAX];
    json_t *tags = json_loads(*b->tags ? b->tags : "[\"default\"]", 0, NULL);
    struct build_start bs = {.from_template = p->from_template,
                             .from_image = p->from_image,
                             .steps = p->steps,
                             .force = p->force,
                             .target = target,
                             .cpu = b->cpu ? b->cpu : 2,
                             .memory_mb = b->memory_mb ? b->memory_mb : 1024,
                             .timeout_s = build_timeout_s(srv),
                             .step_timeout_s = BUILD_STEP_TIMEOUT_S,
                             .start_cmd = p->start_cmd,
                             .ready_cmd = p->ready_cmd,
                             .user = p->user,
                             .workdir = p->workdir,
                             .tags = tags,
                             .storage_max_bytes = req->conf->template_storage_mb * 1024LL * 1024,
                             .max_builds = req->conf->max_builds};
    struct sched_error err = {0};

    if (target_of(req, t, b->id, target, sizeof(target)) == 0) {
        if (template_build_start(req->rc, &srv->sched, req->cred.ws, req->actor, t->id, b->id, &bs,
                                 &err) == 0)
            /* "{}": the SDK parses a 202's body as JSON, and nginx sends
             * an empty FastCGI answer without a Content-Length: 0. */
            respond_json(req, 202, json_object());
        else
            respond_error(req, err.status, "%s", err.message);
    }
    json_decref(tags);
}

void h_e2b_template_build(struct request *req)
{
    struct template_record t;
    struct build_record b;
    struct template_build_req p;
    char err[256];
    json_t *body;

    if (own_template(req, req->params[0], &t) != 1 || waiting_build(req, &t, req->params[1], &b))
        return;
    body = request_json_body(req);
    if (!body)
        return;
    if (template_build_parse(body, req->conf->registry, &p, err, sizeof(err)) != 0) {
        json_decref(body);
        respond_error(req, 400, "%s", err);
        return;
    }
    json_decref(body);
    /* A FROM of Corral's registry is a template of the caller's own, or of
     * the fleet: another workspace's is as absent. */
    if (p.from_registry && *p.registry_ws && strcmp(p.registry_ws, req->cred.ws) != 0)
        respond_error(req, 404, "template '%s' not found", p.from_template);
    else if (files_present(req, p.steps) == 0)
        start_build(req, &t, &b, &p);
    json_decref(p.steps);
}
