/* build_run.h: one build step run in the build's container, and the layer
 * committed after it (docs/templates.md). RUN and COPY are Engine API execs
 * (RUN: /bin/sh -c as the step's user or the current USER, in the current
 * WORKDIR, with the ENVs so far); ENV, WORKDIR and USER change the state
 * (WORKDIR also makes the directory). */
#ifndef WORKERD_BUILD_RUN_H
#define WORKERD_BUILD_RUN_H

#include "build_steps.h"
#include "docker_exec.h"

/* A COPY step's files (the tar the SDK uploaded, plain or gzip): 0 with
 * *buf (malloc'ed) and *len; 1 not to be had (err); -1 unreachable. */
typedef int (*build_fetch_fn)(void *ud, const char *hash, char **buf, size_t *len, char *err,
                              size_t errlen);

struct build_io {
    struct docker *d;
    const char *ctr; /* the container's name or id */
    long step_timeout_ms;
    build_fetch_fn fetch;
    exec_line_fn line; /* each line of a RUN's output (may be NULL) */
    void *ud;          /* for fetch and line */
};

/* Runs s on the container, st updated. 0 done; 1 failed (reason: "exit code
 * N: <last lines>" or why); 2 over the step timeout; -1 dockerd (or, for a
 * COPY, the control plane) did not answer. */
int build_step_run(const struct build_io *io, const struct build_step *s, struct build_state *st,
                   char *reason, size_t len);

/* Commits the container as the layer of key (repo LAYER_REPO, tag the key's
 * first 32 hex), its config: st's ENVs (after sandbox_env_blanked's), WORKDIR
 * and USER, labels corral.layer=key and the encoded state. The image's id in
 * image (LAYER_KEY_MAX). 0, 1 refused (err), -1 dockerd down. */
int build_commit(const struct build_io *io, const char *key, const struct build_state *st,
                 char *image, char *err, size_t errlen);

#endif
