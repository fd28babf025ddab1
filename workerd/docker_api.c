#include "curl_buf.h"
#include "docker_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Engine API version: dockerd 20.10 speaks 1.41; pinning it keeps the JSON
 * shapes we parse stable across daemon upgrades. */
#define DOCKER_API_PREFIX "http://docker/v1.41"

int docker_init(struct docker *d, const char *sock)
{
    snprintf(d->sock, sizeof(d->sock), "%s", sock);
    d->curl = curl_easy_init();
    return d->curl ? 0 : -1;
}

void docker_close(struct docker *d)
{
    if (d->curl)
        curl_easy_cleanup(d->curl);
    d->curl = NULL;
}

static void prepare(struct docker *d, const char *method, const char *path, long timeout_ms,
                    struct curl_buf *b)
{
    char url[2048];

    snprintf(url, sizeof(url), DOCKER_API_PREFIX "%s", path);
    curl_easy_reset(d->curl);
    curl_easy_setopt(d->curl, CURLOPT_UNIX_SOCKET_PATH, d->sock);
    curl_easy_setopt(d->curl, CURLOPT_URL, url);
    curl_easy_setopt(d->curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(d->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(d->curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(d->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(d->curl, CURLOPT_WRITEFUNCTION, curl_buf_write);
    curl_easy_setopt(d->curl, CURLOPT_WRITEDATA, b);
}

static int perform(struct docker *d, const char *method, const char *path, long *status, char *err,
                   size_t errlen)
{
    CURLcode rc = curl_easy_perform(d->curl);

    if (rc != CURLE_OK) {
        snprintf(err, errlen, "dockerd %s %s: %s", method, path, curl_easy_strerror(rc));
        return -1;
    }
    curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, status);
    return 0;
}

int docker_request(struct docker *d, const char *method, const char *path,
                   const struct docker_req *r, long timeout_ms, long *status, char **buf,
                   size_t *len, char *err, size_t errlen)
{
    struct curl_buf b = {0, 0, 0};
    struct curl_slist *hdrs = NULL;
    char *text = NULL;
    int rc;

    *buf = NULL;
    *len = 0;
    prepare(d, method, path, timeout_ms, &b);
    if (r && r->sink) {
        curl_easy_setopt(d->curl, CURLOPT_WRITEFUNCTION, r->sink);
        curl_easy_setopt(d->curl, CURLOPT_WRITEDATA, r->ud);
    }
    if (r && r->header)
        hdrs = curl_slist_append(hdrs, r->header);
    if (r && r->body) {
        text = json_dumps(r->body, JSON_COMPACT);
        if (!text) {
            curl_slist_free_all(hdrs);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
        curl_easy_setopt(d->curl, CURLOPT_POSTFIELDS, text);
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(d->curl, CURLOPT_POSTFIELDS, "");
    }
    curl_easy_setopt(d->curl, CURLOPT_HTTPHEADER, hdrs);
    rc = perform(d, method, path, status, err, errlen);
    curl_easy_setopt(d->curl, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs); /* may hold a registry token: gone with the call */
    free(text);
    if (rc != 0) {
        free(b.p);
        return -1;
    }
    *buf = b.p;
    *len = b.len;
    return 0;
}

int docker_call(struct docker *d, const char *method, const char *path, json_t *body,
                long timeout_ms, long *status, json_t **out, char *err, size_t errlen)
{
    struct docker_req r = {.body = body};
    char *buf;
    size_t len;

    *out = NULL;
    if (docker_request(d, method, path, &r, timeout_ms, status, &buf, &len, err, errlen) != 0)
        return -1;
    if (len > 0)
        *out = json_loadb(buf, len, 0, NULL);
    free(buf);
    return 0;
}

int docker_call_raw(struct docker *d, const char *method, const char *path, long timeout_ms,
                    long *status, char **buf, size_t *len, char *err, size_t errlen)
{
    return docker_request(d, method, path, NULL, timeout_ms, status, buf, len, err, errlen);
}

int docker_put_bytes(struct docker *d, const char *path, const void *body, size_t len,
                     const char *content_type, long timeout_ms, long *status, char *err,
                     size_t errlen)
{
    struct curl_buf b = {0, 0, 0};
    struct curl_slist *hdrs = NULL;
    char ct[128];
    int rc;

    prepare(d, "PUT", path, timeout_ms, &b);
    snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
    hdrs = curl_slist_append(hdrs, ct);
    curl_easy_setopt(d->curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(d->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(d->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    rc = perform(d, "PUT", path, status, err, errlen);
    curl_slist_free_all(hdrs);
    free(b.p);
    return rc;
}

const char *docker_errmsg(json_t *answer, long status)
{
    const char *m = json_string_value(json_object_get(answer, "message"));
    static __thread char fallback[64];

    if (m)
        return m;
    snprintf(fallback, sizeof(fallback), "dockerd answered %ld", status);
    return fallback;
}

int docker_ping(struct docker *d, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    long status = 0;

    if (docker_call_raw(d, "GET", "/_ping", 5000, &status, &buf, &len, err, errlen) != 0)
        return -1;
    free(buf);
    if (status != 200) {
        snprintf(err, errlen, "dockerd /_ping answered %ld", status);
        return -1;
    }
    return 0;
}

char *docker_filters(struct docker *d, json_t *filters)
{
    char *text = filters ? json_dumps(filters, JSON_COMPACT) : NULL, *enc;

    json_decref(filters);
    enc = text ? curl_easy_escape(d->curl, text, 0) : NULL;
    free(text);
    return enc;
}

int docker_expect(struct docker *d, const char *method, const char *path, json_t *body, long ok,
                  char *err, size_t errlen)
{
    json_t *ans = NULL;
    long status = 0;
    int rc = docker_call(d, method, path, body, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen);

    if (rc == 0 && status != ok) {
        snprintf(err, errlen, "%s %.200s: %.200s", method, path, docker_errmsg(ans, status));
        rc = status == 409 ? 2 : 1;
    }
    json_decref(ans);
    return rc;
}
