#include "layer_cache.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#define CACHE_CALL_MS 30000L

int layer_find(struct docker *d, const char *key, char *id, char *err, size_t errlen)
{
    char path[512], *enc;
    long status = 0;
    json_t *ans = NULL;
    const char *found;

    enc = docker_filters(d, json_pack("{s:[s++]}", "label", LAYER_LABEL, "=", key));
    if (!enc) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(path, sizeof(path), "/images/json?filters=%s", enc);
    curl_free(enc);
    if (docker_call(d, "GET", path, NULL, CACHE_CALL_MS, &status, &ans, err, errlen) != 0)
        return -1;
    found = status == 200 ? json_string_value(json_object_get(json_array_get(ans, 0), "Id")) : NULL;
    if (found)
        snprintf(id, LAYER_KEY_MAX, "%s", found);
    json_decref(ans);
    return found ? 0 : 1;
}

/* GET /images/{name}/json. 0, 1 absent, -1 dockerd down. */
static int image_info(struct docker *d, const char *name, json_t **out, char *err, size_t errlen)
{
    char path[1024];
    long status = 0;

    snprintf(path, sizeof(path), "/images/%s/json", name);
    if (docker_call(d, "GET", path, NULL, CACHE_CALL_MS, &status, out, err, errlen) != 0)
        return -1;
    if (status == 200 && json_string_value(json_object_get(*out, "Id")))
        return 0;
    snprintf(err, errlen, "image %.200s not found", name);
    json_decref(*out);
    *out = NULL;
    return 1;
}

long long layer_image_size(struct docker *d, const char *image)
{
    json_t *info = NULL;
    char err[256];
    long long size = -1;

    if (image_info(d, image, &info, err, sizeof(err)) == 0)
        size = json_integer_value(json_object_get(info, "Size"));
    json_decref(info);
    return size;
}

static int plan_base(struct docker *d, const char *base, struct layer_plan *p, char *err,
                     size_t errlen)
{
    json_t *info = NULL, *cfg;
    int rc = image_info(d, base, &info, err, errlen);

    if (rc != 0)
        return rc;
    cfg = json_object_get(info, "Config");
    snprintf(p->key, sizeof(p->key), "%s", json_string_value(json_object_get(info, "Id")));
    snprintf(p->image, sizeof(p->image), "%s", p->key);
    p->base_size = json_integer_value(json_object_get(info, "Size"));
    snprintf(p->base_workdir, sizeof(p->base_workdir), "%s",
             json_string_value(json_object_get(cfg, "WorkingDir")) ?: "");
    snprintf(p->base_user, sizeof(p->base_user), "%s",
             json_string_value(json_object_get(cfg, "User")) ?: "");
    json_decref(info);
    return 0;
}

int layer_plan_make(struct docker *d, const char *base, json_t *build, struct layer_plan *p,
                    char *err, size_t errlen)
{
    json_t *steps = json_object_get(build, "steps"), *j;
    struct build_step s;
    char key[LAYER_KEY_MAX], id[LAYER_KEY_MAX];
    size_t i;
    int rc, reuse = !json_is_true(json_object_get(build, "force"));

    memset(p, 0, sizeof(*p));
    p->active = 1;
    if (!json_is_array(steps)) {
        snprintf(err, errlen, "build: no steps");
        return 1;
    }
    if ((rc = plan_base(d, base, p, err, errlen)) != 0)
        return rc;
    json_array_foreach(steps, i, j)
    {
        if (build_step_decode(j, &s, err, errlen) != 0)
            return 1;
        reuse = reuse && !s.force;
        if (!reuse || build_layer_key(p->key, j, key) != 0)
            continue; /* every step is checked; none reused after a force */
        rc = layer_find(d, key, id, err, errlen);
        if (rc < 0)
            return -1;
        reuse = rc == 0;
        if (reuse) {
            snprintf(p->key, sizeof(p->key), "%s", key);
            snprintf(p->image, sizeof(p->image), "%s", id);
            p->cached = (int)i + 1;
        }
    }
    return 0;
}

void layer_plan_state(struct docker *d, const struct layer_plan *p, struct build_state *st)
{
    json_t *info = NULL;
    char err[256];
    const char *label = NULL;

    if (p->cached > 0 && image_info(d, p->image, &info, err, sizeof(err)) == 0)
        label = json_string_value(json_object_get(
            json_object_get(json_object_get(info, "Config"), "Labels"), LAYER_STATE_LABEL));
    if (!label || build_state_decode(label, st) != 0)
        build_state_init(st, p->base_workdir, p->base_user);
    json_decref(info);
}
