/* build_steps.h: a build's steps as the create command carries them
 * (docs/templates.md), the layer key of each, and the state the steps build
 * up (ENV, WORKDIR, USER). Pure (tests/workerd/unit_build.c).
 *
 * Layer keys: key_0 is the base image's id ("sha256:…"); key_i is the hex
 * sha256 of key_{i-1} followed by the canonical JSON of step i: the object
 * {"args", "filesHash" (COPY only), "type"} with sorted keys, compact, as
 * jansson writes it. `force` is not part of the key: a forced step is run
 * again and its new layer takes the key, for the builds after it. */
#ifndef WORKERD_BUILD_STEPS_H
#define WORKERD_BUILD_STEPS_H

#include <jansson.h>
#include <stddef.h>

enum step_kind { STEP_RUN, STEP_COPY, STEP_ENV, STEP_WORKDIR, STEP_USER };

#define LAYER_KEY_MAX 72 /* "sha256:" and 64 hex, or 64 hex */
#define BUILD_PATH_MAX 1024
#define BUILD_USER_MAX 64

struct build_step {
    enum step_kind kind;
    json_t *args;           /* borrowed from the command: strings only */
    const char *files_hash; /* COPY's, else NULL */
    int force;
};

/* What the steps so far have set: the environment ("K=V" strings, in
 * order), the working directory and the user the next step runs in. */
struct build_state {
    json_t *env;
    char workdir[BUILD_PATH_MAX];
    char user[BUILD_USER_MAX];
};

/* One step of the command's "steps". 0, or -1 (err says which field). */
int build_step_decode(json_t *j, struct build_step *s, char *err, size_t errlen);

/* The wire name of a kind ("RUN" …). */
const char *build_step_name(enum step_kind k);

/* key_i from key_{i-1} (parent) and step j as the command carries it; out
 * holds 65 bytes. 0, or -1 (j not a step). */
int build_layer_key(const char *parent, const json_t *j, char *out);

/* COPY's destination, made absolute against workdir as Docker does (a
 * relative dest is under WORKDIR); a trailing '/' (dest is a directory) is
 * kept. 0, or -1 when it does not fit or dest is empty. */
int build_copy_dest(const char *workdir, const char *dest, char *out, size_t len);

/* The state as a label's value ({"env": […], "workdir", "user"}) and back.
 * Decode: 0, or -1 (st left empty: env [], "/" and "root"). */
char *build_state_encode(const struct build_state *st);
int build_state_decode(const char *text, struct build_state *st);
void build_state_init(struct build_state *st, const char *workdir, const char *user);
void build_state_free(struct build_state *st);
/* ENV's args (K, V, K2, V2 …) into st (a K set again replaces its value). */
int build_state_env(struct build_state *st, json_t *args);

#endif
