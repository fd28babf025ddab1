#include "curl_buf.h"
#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Answers of the control plane are small; past this something is wrong. */
#define CONTROL_MAX_ANSWER (8 * 1024 * 1024)

int control_init(struct control *ctl, const struct worker_conf *conf)
{
    ctl->conf = conf;
    ctl->cancel = NULL;
    ctl->curl = curl_easy_init();
    return ctl->curl ? 0 : -1;
}

void control_close(struct control *ctl)
{
    if (ctl->curl)
        curl_easy_cleanup(ctl->curl);
    ctl->curl = NULL;
}

static struct curl_slist *headers(const struct control *ctl, const struct worker_identity *id)
{
    char h[STATE_SECRET_MAX + WCONF_STR + 32];
    struct curl_slist *l = curl_slist_append(NULL, "Content-Type: application/json");

    snprintf(h, sizeof(h), "Authorization: Bearer %s", ctl->conf->join_token);
    l = curl_slist_append(l, h);
    if (id) {
        snprintf(h, sizeof(h), "X-Worker-Id: %s", id->worker_id);
        l = curl_slist_append(l, h);
        snprintf(h, sizeof(h), "X-Worker-Secret: %s", id->worker_secret);
        l = curl_slist_append(l, h);
    }
    memset(h, 0, sizeof(h));
    return l;
}

/* libcurl asks this about once a second at least, while a poll waits. */
static int cancelled(void *cancel, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                     curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    return atomic_load((atomic_int *)cancel) != 0;
}

static void prepare(struct control *ctl, const char *path, const char *text, long timeout_ms,
                    struct curl_slist *hdrs, struct curl_buf *b)
{
    char url[WCONF_STR + 128];
    CURL *c = ctl->curl;

    snprintf(url, sizeof(url), "%s%s", ctl->conf->control_url, path);
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CAINFO, ctl->conf->ca_file);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_buf_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    if (ctl->cancel) {
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, cancelled);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, ctl->cancel);
    }
}

int control_post(struct control *ctl, const char *path, json_t *body,
                 const struct worker_identity *id, long timeout_ms, long *status, json_t **out,
                 char *err, size_t errlen)
{
    struct curl_buf b = {0, 0, CONTROL_MAX_ANSWER};
    struct curl_slist *hdrs;
    char *text = json_dumps(body, JSON_COMPACT);
    CURLcode rc;

    *out = NULL;
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return CONTROL_ERR;
    }
    hdrs = headers(ctl, id);
    prepare(ctl, path, text, timeout_ms, hdrs, &b);
    rc = curl_easy_perform(ctl->curl);
    curl_slist_free_all(hdrs);
    free(text);
    if (rc != CURLE_OK) {
        free(b.p);
        snprintf(err, errlen, "POST %s: %s", path, curl_easy_strerror(rc));
        return CONTROL_ERR;
    }
    curl_easy_getinfo(ctl->curl, CURLINFO_RESPONSE_CODE, status);
    if (b.len > 0)
        *out = json_loadb(b.p, b.len, 0, NULL);
    free(b.p);
    return 0;
}

int control_get(struct control *ctl, const char *path, const struct worker_identity *id,
                long timeout_ms, size_t max, long *status, char **buf, size_t *len, char *err,
                size_t errlen)
{
    struct curl_buf b = {0, 0, max};
    struct curl_slist *hdrs = headers(ctl, id);
    CURLcode rc;

    *buf = NULL;
    *len = 0;
    prepare(ctl, path, NULL, timeout_ms, hdrs, &b);
    curl_easy_setopt(ctl->curl, CURLOPT_HTTPGET, 1L);
    rc = curl_easy_perform(ctl->curl);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK) {
        free(b.p);
        snprintf(err, errlen, "GET %s: %s", path, curl_easy_strerror(rc));
        return CONTROL_ERR;
    }
    curl_easy_getinfo(ctl->curl, CURLINFO_RESPONSE_CODE, status);
    *buf = b.p;
    *len = b.len;
    return 0;
}
