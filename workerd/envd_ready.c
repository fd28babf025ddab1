#include "envd_ready.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static size_t discard(char *ptr, size_t size, size_t nmemb, void *ud)
{
    (void)ptr, (void)ud;
    return size * nmemb;
}

/* A plain-HTTP handle to envd at url: no proxy, no signals, short timeouts. */
static CURL *envd_handle(const char *url, long connect_ms, long total_ms)
{
    CURL *c = curl_easy_init();

    if (!c)
        return NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    return c;
}

/* Performs c and cleans it up: the HTTP status, 0 when none came. */
static long perform(CURL *c)
{
    long code = 0;

    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    return code;
}

int envd_health_once(const char *ip, int port)
{
    char url[96];
    CURL *c;

    snprintf(url, sizeof(url), "http://%s:%d/health", ip, port);
    c = envd_handle(url, 250L, 1000L);
    return c && perform(c) == 204;
}

long envd_init_post(const char *ip, int port, const char *secret, const char *body)
{
    struct curl_slist *h = NULL;
    char url[96], *hdr = NULL;
    long code;
    CURL *c;

    snprintf(url, sizeof(url), "http://%s:%d/init", ip, port);
    if (!(c = envd_handle(url, 1000L, 5000L)) || asprintf(&hdr, "X-Corral-Init: %s", secret) < 0) {
        if (c)
            curl_easy_cleanup(c);
        return 0;
    }
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, hdr);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    code = perform(c);
    curl_slist_free_all(h);
    explicit_bzero(hdr, strlen(hdr));
    free(hdr);
    return code;
}
