#include "registry_client.h"

#include "clock.h"
#include "curl_buf.h"
#include "registry_token.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CALL_TOKEN_TTL_S 60
#define CATALOG_PAGE 500
#define CATALOG_PAGES_MAX 2000 /* a million repositories: a bound, not a limit met */
#define ANSWER_MAX (8L << 20)
/* What a HEAD of a manifest accepts: the kinds dockerd pushes. */
#define MANIFEST_TYPES                                                                             \
    "Accept: application/vnd.docker.distribution.manifest.v2+json, "                               \
    "application/vnd.docker.distribution.manifest.list.v2+json, "                                  \
    "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json"

int registry_client_init(struct registry_client *c, const struct corral_conf *conf)
{
    size_t n;

    c->conf = conf;
    if (!conf->registry[0])
        return -1;
    if (conf->registry_url[0])
        snprintf(c->base, sizeof(c->base), "%s", conf->registry_url);
    else
        snprintf(c->base, sizeof(c->base), "http://%s", conf->registry);
    n = strlen(c->base);
    while (n > 0 && c->base[n - 1] == '/')
        c->base[--n] = '\0';
    return 0;
}

/* One call: the method, the path under base, and the scope its token has. */
struct reg_call {
    const char *method, *path;
    const char *type, *name, *actions;
    char *digest; /* when set: the answer's Docker-Content-Digest */
};

static size_t on_header(char *line, size_t size, size_t n, void *ud)
{
    static const char name[] = "Docker-Content-Digest:";
    struct reg_call *q = ud;
    size_t len = size * n, skip = sizeof(name) - 1;

    if (q->digest && len > skip && strncasecmp(line, name, skip) == 0) {
        while (skip < len && line[skip] == ' ')
            skip++;
        while (len > skip && (line[len - 1] == '\r' || line[len - 1] == '\n'))
            len--;
        snprintf(q->digest, REGISTRY_DIGEST_MAX, "%.*s", (int)(len - skip), line + skip);
    }
    return size * n;
}

static struct curl_slist *auth_headers(struct registry_client *c, const struct reg_call *q)
{
    char token[REGISTRY_TOKEN_MAX], line[REGISTRY_TOKEN_MAX + 32];
    struct registry_grant g = {.issuer = c->conf->registry_issuer,
                               .service = c->conf->registry_service,
                               .subject = "corral-api",
                               .repo = q->name,
                               .type = q->type,
                               .actions = q->actions,
                               .now = clock_now_ms() / 1000,
                               .ttl_s = CALL_TOKEN_TTL_S};
    struct curl_slist *h = NULL;

    if (registry_token_sign(c->conf->registry_key_pem, &g, token, sizeof(token)) != 0)
        return NULL;
    snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
    h = curl_slist_append(h, line);
    explicit_bzero(token, sizeof(token));
    explicit_bzero(line, sizeof(line));
    return h ? curl_slist_append(h, MANIFEST_TYPES) : NULL;
}

/* The HTTP status (body into b), or -1 with err said. */
static long call(struct registry_client *c, struct reg_call *q, struct curl_buf *b, char *err,
                 size_t errlen)
{
    char url[1024];
    struct curl_slist *h = auth_headers(c, q);
    CURL *curl = h ? curl_easy_init() : NULL;
    long status = -1;
    CURLcode rc;

    if (!curl) {
        curl_slist_free_all(h);
        snprintf(err, errlen, "registry %s: could not sign a token or start a request", q->path);
        return -1;
    }
    snprintf(url, sizeof(url), "%s%s", c->base, q->path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, q->method);
    curl_easy_setopt(curl, CURLOPT_NOBODY, (long)(strcmp(q->method, "HEAD") == 0));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, curl_buf_write);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, q);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    rc = curl_easy_perform(curl);
    if (rc == CURLE_OK)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    else
        snprintf(err, errlen, "registry %s: %s", c->base, curl_easy_strerror(rc));
    curl_easy_cleanup(curl);
    curl_slist_free_all(h);
    return status;
}

/* A GET whose 200 answer is JSON: it (caller decrefs), or NULL (err). A 404
 * is an empty object. */
static json_t *get_json(struct registry_client *c, struct reg_call *q, char *err, size_t errlen)
{
    struct curl_buf b = {.max = ANSWER_MAX};
    long status = call(c, q, &b, err, errlen);
    json_t *j = NULL;

    if (status == 200)
        j = json_loadb(b.p ? b.p : "", b.len, 0, NULL);
    else if (status == 404)
        j = json_object();
    if (!j && status >= 0)
        snprintf(err, errlen, "registry GET %s: status %ld", q->path, status);
    free(b.p);
    return j;
}

/* One catalog page after last into all: how many it held, or -1. */
static int catalog_page(struct registry_client *c, const char *last, json_t *all, char *err,
                        size_t errlen)
{
    char path[400];
    struct reg_call q = {"GET", path, "registry", "catalog", "*", NULL};
    json_t *page, *repos;
    int n;

    snprintf(path, sizeof(path), "/v2/_catalog?n=%d%s%s", CATALOG_PAGE, *last ? "&last=" : "",
             last);
    page = get_json(c, &q, err, errlen);
    if (!page)
        return -1;
    repos = json_object_get(page, "repositories");
    n = json_is_array(repos) ? (int)json_array_size(repos) : 0;
    if (n > 0)
        json_array_extend(all, repos);
    json_decref(page);
    return n;
}

json_t *registry_catalog(struct registry_client *c, char *err, size_t errlen)
{
    json_t *all = json_array();
    char last[300] = "";
    int n = CATALOG_PAGE;

    for (int pages = 0; all && n == CATALOG_PAGE && pages < CATALOG_PAGES_MAX; pages++) {
        n = catalog_page(c, last, all, err, errlen);
        if (n < 0) {
            json_decref(all);
            return NULL;
        }
        if (n > 0)
            snprintf(last, sizeof(last), "%s",
                     json_string_value(json_array_get(all, json_array_size(all) - 1)));
    }
    return all;
}

json_t *registry_tags(struct registry_client *c, const char *repo, char *err, size_t errlen)
{
    char path[400];
    struct reg_call q = {"GET", path, NULL, repo, "pull", NULL};
    json_t *ans, *tags, *out;

    snprintf(path, sizeof(path), "/v2/%s/tags/list", repo);
    ans = get_json(c, &q, err, errlen);
    if (!ans)
        return NULL;
    tags = json_object_get(ans, "tags");
    out = json_is_array(tags) ? json_incref(tags) : json_array();
    json_decref(ans);
    return out;
}

int registry_digest(struct registry_client *c, const char *repo, const char *tag,
                    char digest[REGISTRY_DIGEST_MAX], char *err, size_t errlen)
{
    char path[400];
    struct reg_call q = {"HEAD", path, NULL, repo, "pull", digest};
    struct curl_buf b = {.max = ANSWER_MAX};
    long status;

    digest[0] = '\0';
    snprintf(path, sizeof(path), "/v2/%s/manifests/%s", repo, tag);
    status = call(c, &q, &b, err, errlen);
    free(b.p);
    if (status == 404)
        return 0;
    if (status == 200 && strncmp(digest, "sha256:", 7) == 0)
        return 1;
    if (status >= 0)
        snprintf(err, errlen, "registry HEAD %s: status %ld", path, status);
    return -1;
}

int registry_manifest_delete(struct registry_client *c, const char *repo, const char *digest,
                             char *err, size_t errlen)
{
    char path[400];
    struct reg_call q = {"DELETE", path, NULL, repo, "pull,delete", NULL};
    struct curl_buf b = {.max = ANSWER_MAX};
    long status;

    snprintf(path, sizeof(path), "/v2/%s/manifests/%s", repo, digest);
    status = call(c, &q, &b, err, errlen);
    free(b.p);
    if (status == 202 || status == 404)
        return 0;
    if (status >= 0)
        snprintf(err, errlen, "registry DELETE %s: status %ld", path, status);
    return -1;
}
