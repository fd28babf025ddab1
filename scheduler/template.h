/* template.h: creates from a workspace's own templates (issue 28,
 * docs/templates.md): the name, id or name:tag a create asks for becomes the
 * template's image in the registry and its start and ready commands. */
#ifndef CORRAL_SCHED_TEMPLATE_H
#define CORRAL_SCHED_TEMPLATE_H

#include "rconn.h"
#include "sched_error.h"
#include "template_store.h"

#include <jansson.h>

struct sched_conf;

struct sandbox_spec;

/* When spec->template_id names a template of ws with a ready build, fills
 * the spec's image, base_template and start_json (its ready command has
 * ready_timeout_s to succeed: less than the create's own wait, so that a
 * create that never gets ready says why); 0 (also when it names no
 * such template: the fleet's templates are the placement's business), or -1
 * with err (409 a template with no ready build, 503). */
int template_resolve(struct rconn *rc, const char *ws, long ready_timeout_s,
                     struct sandbox_spec *spec, struct sched_error *err);

/* The template and the build a reference "name", "id" or "name:tag" names in
 * ws: 1, 0 none (err 404), -1 (err 503). bid "" when the template has no
 * ready build under that tag. */
int template_lookup(struct rconn *rc, const char *ws, const char *ref, struct template_record *t,
                    char bid[TEMPLATE_ID_MAX], struct sched_error *err);

#endif

/* What a build starts from and does (checked by the caller). */
struct build_start {
    const char *from_template, *from_image; /* one is "" */
    json_t *steps;
    int force;
    const char *target; /* registry/repo:tag the worker pushes */
    long cpu, memory_mb, timeout_s, step_timeout_s;
    const char *start_cmd, *ready_cmd, *user, *workdir;
    json_t *tags; /* the tags the template gets once ready */
    /* The operator's ceilings (decision 0081): what a workspace's templates
     * may take in the registry, and its builds at once. */
    long long storage_max_bytes;
    long max_builds;
};

/* Starts build bid of template tpl: a sandbox from the base, placed, walled
 * and limited as any (scheduler_create), whose worker runs the steps. 0, or
 * -1 with err (the build is then ended as error with err's message). */
int template_build_start(struct rconn *rc, const struct sched_conf *c, const char *ws,
                         const char *actor, const char *tpl, const char *bid,
                         const struct build_start *bs, struct sched_error *err);

/* A deleted template's images leave every live worker that may hold them
 * (ws's pool and the unscoped fleet): a "template_remove" command each, with
 * its repository in registry. */
void template_images_forget(struct rconn *rc, const char *ws, const char *registry,
                            const char *tpl);

/* A build still building whose sandbox has ended, or moved off the worker
 * that began it, has failed: ends it as error (its reason says why) and
 * updates b. 0, or -1 (Redis). */
int template_build_check(struct rconn *rc, const char *ws, struct build_record *b);

/* A worker's last word on a build. */
struct build_outcome {
    enum build_state to; /* ready or error */
    const char *step, *reason;
    const char *image;    /* ready: the pushed image, by digest */
    long long size_bytes; /* ready: what it added over its base */
};

/* A worker's last word on build b: ends the build, makes the template the
 * build's on ready (unless its size would take the workspace's templates
 * over storage_max_bytes: then the build fails, naming it), kills the
 * build's sandbox. 1 ended now, 0 not b's worker's or not building, -1. */
int template_build_finish(struct rconn *rc, const char *ws, const char *wid,
                          const struct build_record *b, const struct build_outcome *o,
                          long long storage_max_bytes);
