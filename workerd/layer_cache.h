/* layer_cache.h: a build's layer cache (docs/templates.md): the local images
 * labelled corral.layer=<key>, each the filesystem after the steps up to its
 * key (build_steps.h), with the state they set in corral.layer.state. A
 * build's container starts from the longest cached prefix of its steps. */
#ifndef WORKERD_LAYER_CACHE_H
#define WORKERD_LAYER_CACHE_H

#include "build_steps.h"
#include "docker_api.h"

#define LAYER_LABEL "corral.layer"
#define LAYER_STATE_LABEL "corral.layer.state"
#define LAYER_REPO "corral-layer"

/* Where a build starts. */
struct layer_plan {
    int active;                /* the create is a build */
    char image[LAYER_KEY_MAX]; /* the image its container is made from (an id) */
    char key[LAYER_KEY_MAX];   /* the key of that image: the base's id, or step cached's */
    int cached;                /* steps 1..cached are in it */
    long long base_size;       /* the base image's size, bytes */
    char base_workdir[BUILD_PATH_MAX];
    char base_user[BUILD_USER_MAX];
};

/* The id of the image labelled with key, in id (LAYER_KEY_MAX). 0 found, 1
 * none, -1 dockerd down. */
int layer_find(struct docker *d, const char *key, char *id, char *err, size_t errlen);

/* The plan of build (the command's "build" object) from base (the image its
 * template names, present here). 0; 1 the build cannot start (err: a bad
 * step, or the base missing); -1 dockerd down. */
int layer_plan_make(struct docker *d, const char *base, json_t *build, struct layer_plan *p,
                    char *err, size_t errlen);

/* An image's size in bytes as dockerd reports it; -1 unknown. */
long long layer_image_size(struct docker *d, const char *image);

/* The state the plan's image was left in: its label's, or (the base) its
 * WORKDIR and USER and no ENV. */
void layer_plan_state(struct docker *d, const struct layer_plan *p, struct build_state *st);

#endif
