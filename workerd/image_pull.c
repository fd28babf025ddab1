#include "image_pull.h"

#include "registry_auth.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PULL_TIMEOUT_MS 600000L

int image_stream_error(const char *buf, size_t len, char *err, size_t errlen)
{
    const char *p = buf, *end = buf + len;
    int found = 0;

    while (buf && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        json_t *m = json_loadb(p, n, 0, NULL);
        const char *e = json_string_value(json_object_get(m, "error"));
        if (e) {
            snprintf(err, errlen, "%s", e);
            found = 1;
        }
        json_decref(m);
        p += n + 1;
    }
    return found;
}

/* 0 present, 1 absent, -1 dockerd down. */
static int present(struct docker *d, const char *ref, char *err, size_t errlen)
{
    char path[1024];
    long status = 0;
    json_t *ans = NULL;

    snprintf(path, sizeof(path), "/images/%s/json", ref);
    if (docker_call(d, "GET", path, NULL, 30000, &status, &ans, err, errlen) != 0)
        return -1;
    json_decref(ans);
    return status == 200 ? 0 : 1;
}

int image_stream_call(struct docker *d, const char *path, const char *header, long timeout_ms,
                      char **buf, size_t *len, char *why, size_t whylen)
{
    struct docker_req r = {.header = header};
    long status = 0;
    int rc;

    *buf = NULL;
    *len = 0;
    rc = docker_request(d, "POST", path, &r, timeout_ms, &status, buf, len, why, whylen);
    if (rc != 0)
        return -1;
    if (status != 200) {
        json_t *ans = json_loadb(*buf ? *buf : "", *len, 0, NULL);
        snprintf(why, whylen, "%s", docker_errmsg(ans, status));
        json_decref(ans);
        rc = 1;
    } else if (image_stream_error(*buf, *len, why, whylen)) {
        rc = 1;
    }
    if (rc) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

int image_pull_with(struct docker *d, const char *ref, const char *header, char *err, size_t errlen)
{
    char host[256], repo[256], tag[128];
    char path[1024], why[512] = "", from[600], *f, *t;
    char *buf = NULL;
    size_t len = 0;
    int rc;

    if (registry_ref_split(ref, host, sizeof(host), repo, sizeof(repo), tag, sizeof(tag)) != 0) {
        snprintf(err, errlen, "pull %.200s: not an image of a registry (HOST:PORT/REPO@DIGEST)",
                 ref);
        return 1;
    }
    snprintf(from, sizeof(from), "%s/%s", host, repo);
    f = curl_easy_escape(d->curl, from, 0);
    t = curl_easy_escape(d->curl, tag, 0);
    if (!f || !t) {
        curl_free(f);
        curl_free(t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(path, sizeof(path), "/images/create?fromImage=%s&tag=%s", f, t);
    curl_free(f);
    curl_free(t);
    rc = image_stream_call(d, path, header, PULL_TIMEOUT_MS, &buf, &len, why, sizeof(why));
    free(buf);
    if (rc < 0)
        snprintf(err, errlen, "%s", why);
    else if (rc)
        snprintf(err, errlen, "pull %.200s: %.300s", ref, why);
    return rc;
}

/* An image of another registry (a build's fromImage: docs/templates.md),
 * pulled as anyone may: Corral holds no credentials for it. The error names
 * the image and the registry tried (Docker Hub when the name has no host). */
static int public_pull(struct docker *d, const char *ref, const char *host, char *err,
                       size_t errlen)
{
    char path[1024], why[512] = "", *f = curl_easy_escape(d->curl, ref, 0), *buf = NULL;
    size_t len = 0;
    int rc;

    if (!f) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(path, sizeof(path), "/images/create?fromImage=%s", f);
    curl_free(f);
    rc = image_stream_call(d, path, NULL, PULL_TIMEOUT_MS, &buf, &len, why, sizeof(why));
    free(buf);
    if (rc < 0)
        snprintf(err, errlen, "%s", why);
    else if (rc)
        snprintf(err, errlen, "pull %.200s from %.100s: %.300s", ref, *host ? host : "docker.io",
                 why);
    return rc;
}

int image_ensure(struct docker *d, const struct worker_conf *c, const struct worker_identity *id,
                 const char *ref, char *err, size_t errlen)
{
    char host[256] = "", repo[256], tag[128], header[REGISTRY_HEADER_MAX], why[256];
    int rc = present(d, ref, err, errlen);

    if (rc <= 0)
        return rc;
    if (registry_ref_split(ref, host, sizeof(host), repo, sizeof(repo), tag, sizeof(tag)) != 0) {
        host[0] = '\0';
        return public_pull(d, ref, host, err, errlen);
    }
    if (strncmp(repo, "corral/", 7) != 0)
        return public_pull(d, ref, host, err, errlen);
    rc = registry_auth_header(c, id, repo, 0, header, sizeof(header), why, sizeof(why));
    if (rc != 0) {
        snprintf(err, errlen, "pull %.200s: %s", ref, why);
        return rc;
    }
    rc = image_pull_with(d, ref, header, err, errlen);
    explicit_bzero(header, sizeof(header));
    return rc;
}
