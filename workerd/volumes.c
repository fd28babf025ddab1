#include "volumes.h"

#include "volume_names.h"

#include <stdio.h>
#include <string.h>

/* 0 ours (or absent: *exists 0), 1 someone else's, -1 no answer. Its
 * directory on this host into mp (when not NULL and it exists). */
static int check_owner(struct docker *d, const char *wid, const char *ws, const char *name,
                       int *exists, char *mp, size_t mplen, char *err, size_t errlen)
{
    char path[128];
    long status = 0;
    json_t *ans = NULL, *labels;
    int ours;

    snprintf(path, sizeof(path), "/volumes/%s", name);
    if (docker_call(d, "GET", path, NULL, 10000, &status, &ans, err, errlen) != 0)
        return -1;
    *exists = status == 200;
    labels = json_object_get(ans, "Labels");
    ours = status == 404 ||
           (status == 200 &&
            !strcmp(json_string_value(json_object_get(labels, "corral.worker")) ?: "", wid) &&
            !strcmp(json_string_value(json_object_get(labels, "corral.workspace")) ?: "", ws));
    if (!ours)
        snprintf(err, errlen, "volume %s is not this workspace's on this worker", name);
    if (ours && mp)
        snprintf(mp, mplen, "%s", json_string_value(json_object_get(ans, "Mountpoint")) ?: "");
    json_decref(ans);
    return ours ? 0 : 1;
}

/* Makes volume name, labelled as ws's on this worker, unless it exists (and
 * is theirs). 0, 1 refused, -1 no answer. */
static int ensure(struct docker *d, const char *wid, const char *ws, const char *name, char *mp,
                  size_t mplen, char *err, size_t errlen)
{
    long status = 0;
    json_t *ans = NULL, *body;
    int exists = 0, rc;

    if ((rc = check_owner(d, wid, ws, name, &exists, mp, mplen, err, errlen)) != 0 || exists)
        return rc;
    /* docker_call does not take the body: it is ours to free */
    body = json_pack("{s:s, s:{s:s, s:s, s:s}}", "Name", name, "Labels", "corral.worker", wid,
                     "corral.workspace", ws, "corral.role", "volume");
    rc = docker_call(d, "POST", "/volumes/create", body, 30000, &status, &ans, err, errlen);
    json_decref(body);
    if (rc != 0)
        return -1;
    if (status == 201 && mp)
        snprintf(mp, mplen, "%s", json_string_value(json_object_get(ans, "Mountpoint")) ?: "");
    json_decref(ans);
    if (status != 201) {
        snprintf(err, errlen, "volume %s: create answered %ld", name, status);
        return 1;
    }
    return 0;
}

static int prepare_one(struct docker *d, const char *wid, const char *ws, const char *name,
                       const char *target, char *err, size_t errlen)
{
    if (!volume_docker_name_ok(name) || !volume_path_ok(target)) {
        snprintf(err, errlen, "volume mount %.64s at %.128s refused", name ? name : "?",
                 target ? target : "?");
        return 1;
    }
    return ensure(d, wid, ws, name, NULL, 0, err, errlen);
}

int volumes_mountpoint(struct docker *d, const char *wid, const char *ws, const char *name,
                       char *out, size_t len, char *err, size_t errlen)
{
    int rc;

    out[0] = '\0';
    if (!volume_docker_name_ok(name)) {
        snprintf(err, errlen, "not a volume name: %.64s", name);
        return 1;
    }
    if ((rc = ensure(d, wid, ws, name, out, len, err, errlen)) != 0)
        return rc;
    if (out[0] != '/') { /* a driver without a local directory: not ours to serve */
        snprintf(err, errlen, "volume %s has no directory on this host", name);
        return -1;
    }
    return 0;
}

int volumes_prepare(struct docker *d, const char *wid, json_t *sb, char *err, size_t errlen)
{
    const char *ws = json_string_value(json_object_get(sb, "workspace"));
    json_t *vols = json_object_get(sb, "volumes"), *v;
    size_t i;
    int rc;

    if (vols && (!json_is_array(vols) || json_array_size(vols) > VOLUME_MOUNTS_MAX || !ws)) {
        snprintf(err, errlen, "volumes: not a list of mounts");
        return 1;
    }
    json_array_foreach(vols, i, v)
    {
        rc = prepare_one(d, wid, ws, json_string_value(json_object_get(v, "volume")),
                         json_string_value(json_object_get(v, "path")), err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

json_t *volumes_mounts(json_t *sb)
{
    json_t *out = json_array(), *v;
    size_t i;

    json_array_foreach(json_object_get(sb, "volumes"), i, v)
    {
        json_array_append_new(out, json_pack("{s:s, s:O, s:O}", "Type", "volume", "Source",
                                             json_object_get(v, "volume"), "Target",
                                             json_object_get(v, "path")));
    }
    return out;
}

int volumes_remove(struct docker *d, const char *wid, const char *ws, const char *name, char *err,
                   size_t errlen)
{
    char path[128];
    long status = 0;
    json_t *ans = NULL;
    int exists = 0, rc;

    if (!volume_docker_name_ok(name)) {
        snprintf(err, errlen, "not a volume name: %.64s", name);
        return 1;
    }
    if ((rc = check_owner(d, wid, ws, name, &exists, NULL, 0, err, errlen)) != 0 || !exists)
        return rc;
    snprintf(path, sizeof(path), "/volumes/%s", name);
    if (docker_call(d, "DELETE", path, NULL, 30000, &status, &ans, err, errlen) != 0)
        return -1;
    json_decref(ans);
    if (status != 204 && status != 404) {
        snprintf(err, errlen, "volume %s: remove answered %ld (in use?)", name, status);
        return 1;
    }
    return 0;
}
