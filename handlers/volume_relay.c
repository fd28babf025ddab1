/* volume_relay.c: carries one volume file API request to the worker's data
 * port with libcurl, streaming the body both ways (decision 0071).
 *
 * corral-api carries it, not nginx: the volume token is checked here, and the
 * worker is sent only the operation (method, path, query, body) and a
 * signature under its own data key -- never the client's token. What comes
 * back is rewritten, not passed through: a success's status and body (its
 * type is the operation's: a file's bytes or JSON), an error as {code,
 * message} made from the worker's message, any other answer 502. So a worker
 * can say nothing to a client but what its own volume holds. */
#include "volume_relay.h"

#include "clock.h"
#include "log.h"
#include "respond.h"
#include "volume_sig.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ERR_BODY_MAX 4096 /* an error answer's body; more is not read */

struct relay {
    struct request *req;
    CURL *curl;
    int file;         /* GET .../file: the body is the file's bytes */
    long status;      /* the worker's, once its head came */
    long long length; /* its Content-Length, -1 none */
    int started;      /* a success's head went to the client */
    int client_gone;
    char err[ERR_BODY_MAX + 1];
    size_t err_len;
    long long left; /* request body still to read from nginx */
};

int volume_relay_query_ok(const char *q)
{
    static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                             "-._~%&=+!$'()*,;:@/?";

    return q && strspn(q, ok) == strlen(q);
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    struct relay *r = ud;
    size_t len = size * n;

    if (len > 5 && strncmp(p, "HTTP/", 5) == 0)
        r->length = -1; /* a new answer's head */
    else if (len > 15 && strncasecmp(p, "Content-Length:", 15) == 0)
        r->length = atoll(p + 15);
    return len;
}

static int success(long status)
{
    return status == 200 || status == 201;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct relay *r = ud;
    size_t len = size * n, room;

    if (!r->status)
        curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &r->status);
    if (success(r->status)) {
        if (!r->started) {
            respond_stream_head(r->req, (int)r->status,
                                r->file ? "application/octet-stream" : "application/json",
                                r->length);
            r->started = 1;
        }
        if (respond_body(r->req, p, len) != 0) {
            r->client_gone = 1;
            return 0; /* ends the transfer */
        }
        return len;
    }
    room = ERR_BODY_MAX - r->err_len;
    memcpy(r->err + r->err_len, p, len < room ? len : room);
    r->err_len += len < room ? len : room;
    return len <= room ? len : 0; /* the rest is not wanted */
}

static size_t read_body(char *buf, size_t size, size_t n, void *ud)
{
    struct relay *r = ud;
    size_t want = size * n;
    int got;

    if ((long long)want > r->left)
        want = (size_t)r->left;
    if (want == 0)
        return 0;
    if (want > (1 << 20))
        want = 1 << 20;
    got = FCGX_GetStr(buf, (int)want, r->req->fcgi->in);
    if (got <= 0)
        return CURL_READFUNC_ABORT; /* nginx sent less than its Content-Length */
    r->left -= got;
    return (size_t)got;
}

int volume_relay_passes(long status)
{
    return status == 400 || status == 404 || status == 409 || status == 411 || status == 413 ||
           status == 503 || status == 507;
}

/* The worker's error answer, as ours: the statuses it may give a client pass
 * with its message (printable, cut by respond_error); any other is 502. */
static void answer_error(struct relay *r)
{
    json_t *j;
    const char *msg = NULL;
    long s = r->status;

    r->err[r->err_len] = '\0';
    j = json_loads(r->err, 0, NULL);
    msg = json_string_value(json_object_get(j, "message"));
    if (volume_relay_passes(s)) {
        if (s == 503)
            respond_add_header(r->req, "Retry-After", "1");
        respond_error(r->req, (int)s, "%s", msg ? msg : "refused by the volume's worker");
    } else {
        log_about("warn", &(struct log_about){.workspace = r->req->cred.ws},
                  "volume relay: the worker answered %ld: %.200s", s, msg ? msg : "");
        respond_error(r->req, 502, "the volume's worker gave an unexpected answer (%ld)", s);
    }
    json_decref(j);
}

static struct curl_slist *headers_for(const struct volume_target *t)
{
    char line[512], sig[VOLUME_SIG_HEADER_MAX];
    struct curl_slist *h = NULL;

    volume_sig_header(t->key, t->dname, t->ws, clock_now_ms() / 1000, sig);
    snprintf(line, sizeof(line), "X-Corral-Volume: %s", t->dname);
    h = curl_slist_append(h, line);
    snprintf(line, sizeof(line), "X-Corral-Workspace: %s", t->ws);
    h = curl_slist_append(h, line);
    snprintf(line, sizeof(line), "X-Corral-Gateway: %s", sig);
    h = curl_slist_append(h, line);
    h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
    h = curl_slist_append(h, "Accept:");
    return h;
}

void volume_relay(struct request *req, const struct volume_target *t, long long body_len)
{
    struct relay r = {.req = req, .length = -1, .left = body_len};
    char url[1200], cerr[CURL_ERROR_SIZE] = "";
    struct curl_slist *h = headers_for(t);
    CURLcode rc;

    r.file = !strcmp(req->method, "GET") && strlen(req->path) > 5 &&
             !strcmp(req->path + strlen(req->path) - 5, "/file");
    snprintf(url, sizeof(url), "http://%s%s%s%s", t->addr, req->path, req->query ? "?" : "",
             req->query ? req->query : "");
    r.curl = curl_easy_init();
    if (!r.curl || !h) {
        curl_slist_free_all(h);
        if (r.curl)
            curl_easy_cleanup(r.curl);
        respond_error(req, 500, "out of memory");
        return;
    }
    curl_easy_setopt(r.curl, CURLOPT_URL, url);
    curl_easy_setopt(r.curl, CURLOPT_CUSTOMREQUEST, req->method);
    curl_easy_setopt(r.curl, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(r.curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(r.curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(r.curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    /* No bound on the whole: a large file takes what it takes; a stalled
     * worker (under a byte a second for a minute) is given up on. */
    curl_easy_setopt(r.curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(r.curl, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(r.curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(r.curl, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(r.curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(r.curl, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(r.curl, CURLOPT_ERRORBUFFER, cerr);
    if (body_len > 0 || !strcmp(req->method, "PUT") || !strcmp(req->method, "PATCH")) {
        curl_easy_setopt(r.curl, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(r.curl, CURLOPT_INFILESIZE_LARGE,
                         (curl_off_t)(body_len > 0 ? body_len : 0));
        curl_easy_setopt(r.curl, CURLOPT_READFUNCTION, read_body);
        curl_easy_setopt(r.curl, CURLOPT_READDATA, &r);
    }
    rc = curl_easy_perform(r.curl);
    if (!r.status)
        curl_easy_getinfo(r.curl, CURLINFO_RESPONSE_CODE, &r.status);
    if (r.started) {
        if (rc != CURLE_OK && !r.client_gone)
            log_about("warn", &(struct log_about){.workspace = req->cred.ws},
                      "volume relay: cut short: %s", cerr[0] ? cerr : curl_easy_strerror(rc));
    } else if (!r.status) {
        respond_add_header(req, "Retry-After", "1");
        respond_error(req, 503, "the volume's worker is unreachable (%s); retry shortly",
                      cerr[0] ? cerr : curl_easy_strerror(rc));
    } else if (success(r.status)) {
        /* no body came: an empty file (JSON answers always have one) */
        respond_stream_head(req, (int)r.status,
                            r.file ? "application/octet-stream" : "application/json", 0);
    } else if (r.status == 204) {
        respond_empty(req, 204);
    } else {
        answer_error(&r);
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(r.curl);
}
