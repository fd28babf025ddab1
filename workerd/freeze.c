#include "freeze.h"

#include "containers.h"

#include <stdio.h>
#include <string.h>

/* dockerd answers 409 both for "is already paused" and for "is not running":
 * only the first is success, so the state decides. */
static int already(struct docker *d, const char *name, int freeze)
{
    char path[256], err[128];
    long status = 0;
    json_t *info = NULL;
    int paused, running;

    snprintf(path, sizeof(path), "/containers/%s/json", name);
    if (docker_call(d, "GET", path, NULL, 10000, &status, &info, err, sizeof(err)) != 0 ||
        status != 200) {
        json_decref(info);
        return 0;
    }
    paused = json_is_true(json_object_get(json_object_get(info, "State"), "Paused"));
    running = json_is_true(json_object_get(json_object_get(info, "State"), "Running"));
    json_decref(info);
    return running && paused == freeze;
}

int freeze_sandbox(struct docker *d, const char *wid, const char *sbid, int freeze, char *err,
                   size_t errlen)
{
    char name[160], path[256];
    long status = 0;
    json_t *ans = NULL;

    containers_name(name, sizeof(name), sbid, wid);
    snprintf(path, sizeof(path), "/containers/%s/%s", name, freeze ? "pause" : "unpause");
    if (docker_call(d, "POST", path, NULL, 30000, &status, &ans, err, errlen) != 0)
        return -1;
    if (status == 204 || (status == 409 && already(d, name, freeze))) {
        json_decref(ans);
        return 0;
    }
    snprintf(err, errlen, "%s: %s", freeze ? "pause" : "unpause", docker_errmsg(ans, status));
    json_decref(ans);
    return 1;
}
