#include "request.h"

#include "respond.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *param(FCGX_Request *f, const char *name)
{
    const char *v = FCGX_GetParam(name, f->envp);
    return v ? v : "";
}

void request_init(struct request *req, FCGX_Request *fcgi, struct worker_thread *t)
{
    const char *uri, *q;
    size_t n;

    memset(req, 0, sizeof(*req));
    req->fcgi = fcgi;
    req->thread = t;
    req->rc = &t->rc;
    req->conf = &t->srv->conf;
    req->method = param(fcgi, "REQUEST_METHOD");
    req->request_id = param(fcgi, "REQUEST_ID");
    uri = param(fcgi, "REQUEST_URI");
    q = strchr(uri, '?');
    n = q ? (size_t)(q - uri) : strlen(uri);
    if (n >= sizeof(req->path))
        n = sizeof(req->path) - 1;
    memcpy(req->path, uri, n);
    req->path[n] = '\0';
    req->query = q ? q + 1 : "";
}

const char *request_header(struct request *req, const char *cgi_name)
{
    return FCGX_GetParam(cgi_name, req->fcgi->envp);
}

int request_query(const struct request *req, const char *name, char *out, size_t outlen)
{
    const char *p = req->query;
    size_t nlen = strlen(name);

    while (*p) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=')
            return url_decode(p + nlen + 1, len - nlen - 1, out, outlen) == 0;
        if (len == nlen && strncmp(p, name, nlen) == 0) {
            out[0] = '\0';
            return 1;
        }
        p += len + (amp ? 1 : 0);
    }
    return 0;
}

int request_query_given(const struct request *req, const char *name, char *out, size_t outlen)
{
    const char *p = req->query;
    size_t nlen = strlen(name);

    if (request_query(req, name, out, outlen))
        return 1;
    while (*p) {
        size_t len = strcspn(p, "&");
        if (len >= nlen && strncmp(p, name, nlen) == 0 && (len == nlen || p[nlen] == '='))
            return -1;
        p += len + (p[len] == '&');
    }
    return 0;
}

json_t *request_json_body(struct request *req)
{
    const char *cl = request_header(req, "CONTENT_LENGTH");
    long len = cl && *cl ? atol(cl) : 0;
    json_error_t jerr;
    json_t *body;
    char *buf;
    int got;

    if (len > req->conf->max_body_bytes) {
        respond_error(req, 413, "request body of %ld bytes is over the limit of %ld bytes", len,
                      req->conf->max_body_bytes);
        return NULL;
    }
    if (len <= 0) {
        respond_error(req, 400, "a JSON object body is required");
        return NULL;
    }
    buf = malloc((size_t)len + 1);
    if (!buf) {
        respond_error(req, 500, "out of memory");
        return NULL;
    }
    got = FCGX_GetStr(buf, (int)len, req->fcgi->in);
    body = json_loadb(buf, (size_t)(got > 0 ? got : 0), JSON_REJECT_DUPLICATES, &jerr);
    free(buf);
    if (!body) {
        respond_error(req, 400, "malformed JSON: %s (line %d, column %d)", jerr.text, jerr.line,
                      jerr.column);
        return NULL;
    }
    if (!json_is_object(body)) {
        json_decref(body);
        respond_error(req, 400, "the body must be a JSON object");
        return NULL;
    }
    return body;
}
