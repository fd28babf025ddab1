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

int envd_health_once(const char *ip, int port)
{
    CURL *c = curl_easy_init();
    char url[96];
    long code = 0;
    CURLcode rc;

    if (!c)
        return 0;
    snprintf(url, sizeof(url), "http://%s:%d/health", ip, port);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 250L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 1000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    return code == 204;
}

long envd_init_post(const char *ip, int port, const char *secret, const char *body)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    char url[96], *hdr = NULL;
    long code = 0;

    if (!c || asprintf(&hdr, "X-Corral-Init: %s", secret) < 0) {
        curl_easy_cleanup(c);
        return 0;
    }
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, hdr);
    snprintf(url, sizeof(url), "http://%s:%d/init", ip, port);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    explicit_bzero(hdr, strlen(hdr));
    free(hdr);
    return code;
}
