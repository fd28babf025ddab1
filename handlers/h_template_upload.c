/* PUT /templatefiles/{hash}?t=<token>: the upload URL E2B's GET
 * /templates/{id}/files/{hash} answered (upload_token.h). The SDK sends a
 * COPY step's tar without its API key: the token is the authority, for one
 * hash of one template, once, for 15 minutes; the bytes go to the
 * workspace's slot (template_files.c), capped at TEMPLATE_FILE_MAX. */
#include "clock.h"
#include "handlers.h"
#include "respond.h"
#include "template_build_parse.h"
#include "template_store.h"
#include "upload_token.h"

#include <stdlib.h>

/* The grant the URL carries, or -1 after answering. */
static int granted(struct request *req, struct upload_grant *g)
{
    char token[UPLOAD_TOKEN_MAX];
    const char *why = "malformed";
    struct template_record t;
    int found;

    if (!template_hash_ok(req->params[0]) || request_query(req, "t", token, sizeof(token)) != 1 ||
        upload_token_check(req->conf->server_secret, token, req->params[0], clock_now_ms() / 1000,
                           g, &why) != 0) {
        respond_error(req, 403,
                      "upload URL refused: %s (ask GET /templates/{id}/files/{hash} "
                      "for a new one)",
                      why);
        return -1;
    }
    found = template_find(req->rc, g->ws, g->tpl, &t);
    if (found <= 0) {
        if (found < 0)
            respond_store_down(req);
        else
            respond_error(req, 404, "template '%s' not found", g->tpl);
        return -1;
    }
    return 0;
}

/* The body, exactly Content-Length bytes, or NULL after answering. */
static char *body_of(struct request *req, long *len)
{
    const char *cl = request_header(req, "CONTENT_LENGTH");
    char *buf;
    long got = 0;

    *len = cl && *cl ? atol(cl) : -1;
    if (*len < 0) {
        respond_error(req, 411, "Content-Length is required");
        return NULL;
    }
    if (*len > TEMPLATE_FILE_MAX) {
        respond_error(req, 413, "files of %ld bytes are over the limit of %ld bytes", *len,
                      TEMPLATE_FILE_MAX);
        return NULL;
    }
    buf = malloc((size_t)*len + 1);
    if (!buf) {
        respond_error(req, 500, "out of memory");
        return NULL;
    }
    while (got < *len) {
        int n = FCGX_GetStr(buf + got, (int)(*len - got), req->fcgi->in);
        if (n <= 0)
            break;
        got += n;
    }
    if (got != *len) {
        free(buf);
        respond_error(req, 400, "the body ended after %ld of %ld bytes", got, *len);
        return NULL;
    }
    return buf;
}

void h_template_upload(struct request *req)
{
    struct upload_grant g;
    char *data;
    long len;
    int first;

    if (granted(req, &g) != 0 || !(data = body_of(req, &len)))
        return;
    first = template_upload_claim(req->rc, g.ws, g.nonce, UPLOAD_TOKEN_TTL_S);
    if (first == 1) {
        int put = template_file_put(req->rc, g.ws, req->params[0], data, (size_t)len,
                                    req->conf->template_upload_mb * (1LL << 20));
        if (put != 0)
            first = put; /* -1 Redis, -2 over the budget */
    }
    free(data);
    if (first == -2)
        respond_error(req, 413,
                      "the workspace's uploads of the last 24 hours would pass %ld MiB "
                      "(template_upload_mb)",
                      req->conf->template_upload_mb);
    else if (first < 0)
        respond_store_down(req);
    else if (first == 0)
        respond_error(req, 409, "this upload URL was used already");
    else
        respond_empty(req, 200);
}
