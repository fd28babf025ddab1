#include "respond.h"

#include "http_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread char extra_headers[512];

void respond_add_header(struct request *req, const char *name, const char *value)
{
    size_t used = strlen(extra_headers);

    (void)req;
    snprintf(extra_headers + used, sizeof(extra_headers) - used, "%s: %s\r\n", name, value);
}

static void write_head(struct request *req, int status, const char *type)
{
    FCGX_FPrintF(req->fcgi->out, "Status: %d %s\r\n", status, http_status_text(status));
    if (type)
        FCGX_FPrintF(req->fcgi->out, "Content-Type: %s\r\n", type);
    FCGX_FPrintF(req->fcgi->out, "Cache-Control: no-store\r\n%s\r\n", extra_headers);
    extra_headers[0] = '\0';
    req->responded = 1;
    req->status = status;
}

void respond_json(struct request *req, int status, json_t *body)
{
    char *text = json_dumps(body, JSON_COMPACT);

    json_decref(body);
    if (!text) {
        respond_error(req, 500, "could not encode the answer");
        return;
    }
    write_head(req, status, "application/json");
    FCGX_PutS(text, req->fcgi->out);
    free(text);
}

void respond_error(struct request *req, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    json_t *body;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* Messages may quote client input: keep them printable ASCII so the JSON
     * encoder cannot refuse them. */
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
            *c = '?';
    snprintf(req->error, sizeof(req->error), "%s", msg);
    body = json_pack("{s:i, s:s}", "code", status, "message", msg);
    respond_json(req, status, body);
}

void respond_empty(struct request *req, int status)
{
    write_head(req, status, NULL);
}

void respond_stream_head(struct request *req, int status, const char *type, long long length)
{
    char len[40];

    if (length >= 0) {
        snprintf(len, sizeof(len), "%lld", length);
        respond_add_header(req, "Content-Length", len);
    }
    write_head(req, status, type);
}

int respond_body(struct request *req, const char *p, size_t n)
{
    while (n > 0) {
        int chunk = n > (1 << 20) ? 1 << 20 : (int)n;
        if (FCGX_PutStr(p, chunk, req->fcgi->out) != chunk)
            return -1;
        p += chunk;
        n -= (size_t)chunk;
    }
    return 0;
}

void respond_store_down(struct request *req)
{
    respond_error(req, 503, "state store unavailable; retry shortly");
}

void respond_change(struct request *req, int n, const char *what)
{
    if (n < 0)
        respond_store_down(req);
    else if (n == 0)
        respond_error(req, 404, "%s not found", what);
    else
        respond_empty(req, 204);
}
