#include "envd_ready.h"

#include <curl/curl.h>
#include <stdio.h>

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
