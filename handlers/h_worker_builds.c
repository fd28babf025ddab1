/* The worker routes of a template build (docs/templates.md): POST
 * /v1/worker/builds/{bid} (its log and last word) and GET
 * /v1/worker/build-files/{bid}/{hash} (a COPY step's files). Heard only from
 * the worker whose pool holds the build's sandbox: another worker, even one
 * that runs sandboxes of the same workspace, gets 404. */
#include "clock.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_store.h"
#include "template.h"
#include "template_build_parse.h"
#include "worker_build_parse.h"
#include "worker_registry.h"

#include <stdlib.h>
#include <string.h>

/* A report can come a moment before the create that placed the build has
 * recorded which sandbox runs it (template_build_start): wait that moment. */
#define BEGIN_WAIT_MS 2000

static int build_of_caller(struct request *req, const char *wid, char ws[33],
                           struct build_record *b)
{
    struct sandbox_record rec;
    long long until = clock_now_ms() + BEGIN_WAIT_MS;
    int found = build_id_ok(req->params[0]) ? build_workspace(req->rc, req->params[0], ws) : 0;

    while (found == 1 && (found = build_read(req->rc, ws, req->params[0], b)) == 1 &&
           b->state == BUILD_STATE_WAITING && clock_now_ms() < until)
        clock_sleep_ms(50); // sleep: the create's own handler is a few ms from recording it
    if (found == 1) {
        memset(&rec, 0, sizeof(rec));
        found = sandbox_read(req->rc, ws, b->sandbox, &rec);
        if (found == 1 && (strcmp(b->worker, wid) != 0 || strcmp(rec.pool, req->cred.ws) != 0))
            found = 0;
        sandbox_record_free(&rec);
    }
    if (found < 0)
        respond_store_down(req);
    else if (found == 0)
        respond_error(req, 404, "build '%s' is not one this worker runs", req->params[0]);
    return found;
}

static void apply_report(struct request *req, const char *wid, const char *ws,
                         const struct build_record *b, const struct worker_build_report *r)
{
    char image[TEMPLATE_IMAGE_MAX] = "";
    int n = 1;

    if (json_array_size(r->logs) && build_log_append(req->rc, ws, b->id, r->logs) != 0) {
        respond_store_down(req);
        return;
    }
    if (r->ends == 1 && worker_build_image(b->target, r->digest, image, sizeof(image)) != 0) {
        respond_error(req, 400, "digest: the build's target has no tag to replace");
        return;
    }
    if (r->ends) {
        struct build_outcome o = {.to = r->ends == 1 ? BUILD_STATE_READY : BUILD_STATE_ERROR,
                                  .step = r->step,
                                  .reason = r->reason,
                                  .image = image,
                                  .size_bytes = r->size_bytes};
        n = template_build_finish(req->rc, ws, wid, b, &o,
                                  req->conf->template_storage_mb * 1024LL * 1024);
    }
    if (n < 0)
        respond_store_down(req);
    else if (n == 0)
        respond_error(req, 409, "build '%s' has already ended", b->id);
    else
        respond_json(req, 200,
                     json_pack("{s:s}", "state",
                               r->ends == 1   ? "ready"
                               : r->ends == 2 ? "error"
                                              : "building"));
}

void h_worker_build_report(struct request *req)
{
    struct worker_build_report r;
    struct build_record b;
    char wid[33], ws[33], err[256];
    json_t *body = request_json_body(req);

    if (!body)
        return;
    if (worker_build_parse(body, &r, err, sizeof(err)) != 0)
        respond_error(req, 400, "%s", err);
    else if (worker_authenticate(req, wid) == 1 && build_of_caller(req, wid, ws, &b) == 1)
        apply_report(req, wid, ws, &b, &r);
    json_decref(r.logs);
    json_decref(body);
}

void h_worker_build_files(struct request *req)
{
    struct build_record b;
    char wid[33], ws[33], *data = NULL;
    size_t len = 0;
    int found;

    if (!template_hash_ok(req->params[1])) {
        respond_error(req, 400, "hash: must be 64 hex digits");
        return;
    }
    if (worker_authenticate(req, wid) != 1 || build_of_caller(req, wid, ws, &b) != 1)
        return;
    found = template_file_get(req->rc, ws, req->params[1], &data, &len);
    if (found < 0)
        respond_store_down(req);
    else if (found == 0)
        respond_error(req, 404, "no files of hash %s", req->params[1]);
    else {
        respond_stream_head(req, 200, "application/octet-stream", (long long)len);
        respond_body(req, data, len);
    }
    free(data);
}
