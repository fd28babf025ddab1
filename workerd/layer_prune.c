#include "layer_prune.h"

#include "layer_cache.h"
#include "log.h"

#include <curl/curl.h>
#include <stdio.h>

#define PRUNE_CALL_MS 120000L

int layer_cache_prune(struct docker *d, const char *wid, long max_age_s)
{
    char path[1024], until[32], err[256], *enc;
    long status = 0;
    json_t *ans = NULL;
    int n;

    if (max_age_s <= 0)
        return 0;
    snprintf(until, sizeof(until), "%lds", max_age_s);
    enc = docker_filters(d, json_pack("{s:[s], s:[s, s+], s:[s], s:[s]}", "dangling", "false",
                                      "label", LAYER_LABEL, "corral.worker=", wid, "label!",
                                      "corral.snapshot", "until", until));
    if (!enc)
        return -1;
    snprintf(path, sizeof(path), "/images/prune?filters=%s", enc);
    curl_free(enc);
    if (docker_call(d, "POST", path, NULL, PRUNE_CALL_MS, &status, &ans, err, sizeof(err)) != 0 ||
        status != 200) {
        /* 409: another prune runs (a snapshot's); this one waits for the next build. */
        log_warn("layer cache prune: %s", status ? docker_errmsg(ans, status) : err);
        json_decref(ans);
        return -1;
    }
    n = (int)json_array_size(json_object_get(ans, "ImagesDeleted"));
    if (n > 0)
        log_info("layer cache: %d image record(s) older than %ld s removed, %lld bytes freed", n,
                 max_age_s, (long long)json_integer_value(json_object_get(ans, "SpaceReclaimed")));
    json_decref(ans);
    return n;
}
