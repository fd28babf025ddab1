#include "build_push.h"

#include "image_pull.h"
#include "registry_auth.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PUSH_TIMEOUT_MS 1800000L
#define PUSH_HOLD_WAIT_S 900 /* a collection's hold lasts at most 600 s */
#define PUSH_HOLD_PACE_S 3

int build_push_digest(const char *buf, size_t len, char *digest)
{
    const char *p = buf, *end = buf + len;
    int found = -1;

    while (buf && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        json_t *m = json_loadb(p, n, 0, NULL);
        const char *dg = json_string_value(json_object_get(json_object_get(m, "aux"), "Digest"));
        if (dg && strlen(dg) < DIGEST_MAX) {
            snprintf(digest, DIGEST_MAX, "%s", dg);
            found = 0;
        }
        json_decref(m);
        p += n + 1;
    }
    return found;
}

/* POST /images/{image}/tag?repo=&tag=. 0, 1, -1. */
static int tag_image(struct docker *d, const char *image, const char *repo, const char *tag,
                     char *err, size_t errlen)
{
    char path[1024], *r = curl_easy_escape(d->curl, repo, 0),
                     *t = curl_easy_escape(d->curl, tag, 0);
    long status = 0;
    json_t *ans = NULL;
    int rc = -1;

    if (r && t) {
        snprintf(path, sizeof(path), "/images/%s/tag?repo=%s&tag=%s", image, r, t);
        rc = docker_call(d, "POST", path, NULL, 30000, &status, &ans, err, errlen);
    }
    curl_free(r);
    curl_free(t);
    if (rc == 0 && status != 201) {
        snprintf(err, errlen, "tag %.200s: %.200s", repo, docker_errmsg(ans, status));
        rc = 1;
    }
    json_decref(ans);
    return rc;
}

static int push(struct docker *d, const char *name, const char *tag, const char *header,
                char *digest, char *err, size_t errlen)
{
    char path[1024], why[512] = "", *t = curl_easy_escape(d->curl, tag, 0), *buf = NULL;
    size_t len = 0;
    int rc;

    snprintf(path, sizeof(path), "/images/%s/push?tag=%s", name, t ? t : "");
    curl_free(t);
    rc = image_stream_call(d, path, header, PUSH_TIMEOUT_MS, &buf, &len, why, sizeof(why));
    if (rc < 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (rc == 0 && build_push_digest(buf, len, digest) != 0) {
        snprintf(why, sizeof(why), "no digest in dockerd's answer");
        rc = 1;
    }
    free(buf);
    if (rc)
        snprintf(err, errlen, "push %.200s:%.64s: %.300s", name, tag, why);
    return rc;
}

/* target split; 0, or 1 (err). */
static int target_split(const char *target, char *host, char *repo, char *tag, char *err,
                        size_t errlen)
{
    if (registry_ref_split(target, host, 256, repo, 256, tag, 128) != 0 || strchr(target, '@')) {
        snprintf(err, errlen, "push: target %.200s is not HOST:PORT/REPO:TAG", target);
        return 1;
    }
    return 0;
}

int build_push_with(struct docker *d, const char *image, const char *target, const char *header,
                    char *digest, char *err, size_t errlen)
{
    char host[256], repo[256], tag[128], name[600];
    int rc = target_split(target, host, repo, tag, err, errlen);

    if (rc != 0)
        return rc;
    snprintf(name, sizeof(name), "%s/%s", host, repo);
    if ((rc = tag_image(d, image, name, tag, err, errlen)) != 0)
        return rc;
    return push(d, name, tag, header, digest, err, errlen);
}

/* A registry garbage collection holds push tokens for a while (decision
 * 0081): the build waits it out, bounded by the hold's own limit. */
static int push_token(const struct worker_conf *c, const struct worker_identity *id,
                      const char *repo, char *header, size_t len, char *why, size_t whylen)
{
    int rc = 2;

    for (int waited = 0; rc == 2 && waited <= PUSH_HOLD_WAIT_S; waited += PUSH_HOLD_PACE_S) {
        if (waited > 0)
            sleep(PUSH_HOLD_PACE_S);
        rc = registry_auth_header(c, id, repo, 1, header, len, why, whylen);
    }
    return rc;
}

int build_push(struct docker *d, const struct worker_conf *c, const struct worker_identity *id,
               const char *image, const char *target, char *digest, char *err, size_t errlen)
{
    char host[256], repo[256], tag[128], header[REGISTRY_HEADER_MAX], why[256];
    int rc;

    if (target_split(target, host, repo, tag, err, errlen) != 0)
        return 1;
    rc = push_token(c, id, repo, header, sizeof(header), why, sizeof(why));
    if (rc != 0) {
        snprintf(err, errlen, "push %.200s: %s", target, why);
        return rc;
    }
    rc = build_push_with(d, image, target, header, digest, err, errlen);
    explicit_bzero(header, sizeof(header));
    return rc;
}
