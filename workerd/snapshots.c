#include "snapshots.h"

#include "containers.h"
#include "sandbox_body.h"
#include "warm_record.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define COMMIT_TIMEOUT_MS 120000
#define IMAGE_REPO "corral-snap"

int snapshot_image_name_ok(const char *name)
{
    const char *id = name + strlen(IMAGE_REPO ":snap-");

    if (strncmp(name, IMAGE_REPO ":snap-", strlen(IMAGE_REPO ":snap-")) != 0 || strlen(id) != 20)
        return 0;
    return strspn(id, "0123456789abcdef") == 20;
}

/* What the image keeps of the sandbox's environment: sandbox_env_blanked. */
static json_t *commit_config(const char *wid, const char *sbid, const char *ws, const char *image)
{
    json_t *env = json_array();

    warm_record_env_append(sbid, env); /* a claimed warm sandbox's are not in its container's */
    sandbox_env_blanked(env);
    return json_pack("{s:o, s:{s:s, s:s, s:s}}", "Env", env, "Labels", "corral.worker", wid,
                     "corral.workspace", ws, "corral.snapshot", image + strlen(IMAGE_REPO ":"));
}

int snapshot_commit(struct docker *d, const char *wid, const char *sbid, const char *ws,
                    const char *image, char *err, size_t errlen)
{
    char name[160], path[512];
    long status = 0;
    json_t *ans = NULL, *config;
    int rc;

    if (!snapshot_image_name_ok(image) || !containers_id_ok(sbid)) {
        snprintf(err, errlen, "not a snapshot image name or sandbox id");
        return 1;
    }
    containers_name(name, sizeof(name), sbid, wid);
    /* pause=true: the filesystem is copied while no process writes to it. */
    snprintf(path, sizeof(path), "/commit?container=%s&repo=%s&tag=%s&pause=true", name, IMAGE_REPO,
             image + strlen(IMAGE_REPO ":"));
    config = commit_config(wid, sbid, ws, image);
    rc = docker_call(d, "POST", path, config, COMMIT_TIMEOUT_MS, &status, &ans, err, errlen);
    json_decref(config); /* docker_call does not take it */
    if (rc != 0)
        return -1;
    if (status != 201) {
        snprintf(err, errlen, "commit: %s", docker_errmsg(ans, status));
        json_decref(ans);
        return 1;
    }
    json_decref(ans);
    return 0;
}

int snapshot_image_ours(struct docker *d, const char *wid, const char *image, char *err,
                        size_t errlen)
{
    char path[256];
    long status = 0;
    json_t *ans = NULL;
    const char *owner;

    if (!snapshot_image_name_ok(image)) {
        snprintf(err, errlen, "not a snapshot image: %.64s", image);
        return 1;
    }
    snprintf(path, sizeof(path), "/images/%s/json", image);
    if (docker_call(d, "GET", path, NULL, 10000, &status, &ans, err, errlen) != 0)
        return -1;
    owner = json_string_value(json_object_get(
        json_object_get(json_object_get(ans, "Config"), "Labels"), "corral.worker"));
    if (status != 200 || !owner || strcmp(owner, wid) != 0) {
        snprintf(err, errlen, "snapshot image %s is not on this worker", image);
        json_decref(ans);
        return 1;
    }
    json_decref(ans);
    return 0;
}

int snapshot_image_remove(struct docker *d, const char *wid, const char *image, char *err,
                          size_t errlen)
{
    char path[256];
    long status = 0;
    json_t *ans = NULL;
    int rc = snapshot_image_ours(d, wid, image, err, errlen);

    if (rc != 0) /* gone already (or never ours): nothing to remove */
        return rc < 0 ? -1 : 0;
    /* force: sandboxes made from it keep its layers; only the name goes. */
    snprintf(path, sizeof(path), "/images/%s?force=1", image);
    if (docker_call(d, "DELETE", path, NULL, 30000, &status, &ans, err, errlen) != 0)
        return -1;
    if (status != 200 && status != 404) {
        snprintf(err, errlen, "remove %s: %s", image, docker_errmsg(ans, status));
        json_decref(ans);
        return 1;
    }
    json_decref(ans);
    return 0;
}

/* GET or POST on /images/<what>?filters= this worker's dangling snapshot
 * images; *status dockerd's answer (0: none). */
static json_t *dangling_call(struct docker *d, const char *wid, const char *method,
                             const char *what, long *status)
{
    char path[512], err[128], *enc;
    json_t *ans = NULL;

    *status = 0;
    enc = docker_filters(
        d, json_pack("{s:[s], s:[s+]}", "dangling", "true", "label", "corral.worker=", wid));
    if (!enc)
        return NULL;
    snprintf(path, sizeof(path), "/images/%s?filters=%s", what, enc);
    curl_free(enc);
    if (docker_call(d, method, path, NULL, 30000, status, &ans, err, sizeof(err)) != 0 ||
        *status != 200) {
        json_decref(ans);
        return NULL;
    }
    return ans;
}

#define PRUNE_BUSY_TRIES 40 /* 250 ms apart: dockerd's prunes take a second or two */

int snapshot_images_prune(struct docker *d, const char *wid)
{
    json_t *left;
    long status;
    int n;

    /* 409: another prune runs (a kill beside this one). It may have begun
     * before this kill's container was removed, and so kept the image this
     * one freed: this prune waits its turn rather than count on it. */
    for (int i = 0; i < PRUNE_BUSY_TRIES; i++) {
        json_decref(dangling_call(d, wid, "POST", "prune", &status));
        if (status != 409)
            break;
        usleep(250 * 1000);
    }
    left = dangling_call(d, wid, "GET", "json", &status);
    n = left ? (int)json_array_size(left) : 1;
    json_decref(left);
    return n;
}
