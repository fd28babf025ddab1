/* image_pull.h: a registry image (a template's, docs/templates.md) made
 * present on this worker: pulled from Corral's registry the first time a
 * sandbox of it lands here, with a pull token from the control plane. */
#ifndef WORKERD_IMAGE_PULL_H
#define WORKERD_IMAGE_PULL_H

#include "docker_api.h"
#include "state_file.h"
#include "worker_conf.h"

/* The error of a pull or push answer (dockerd's progress stream: one JSON
 * object a line, an {"error": …} one when it failed, HTTP 200 either way)
 * into err; 1 when there was one, else 0. Pure. */
int image_stream_error(const char *buf, size_t len, char *err, size_t errlen);

/* A pull or push: POST path with header (or NULL) and its progress stream
 * read to the end. 0 with *buf (malloc'ed, the caller frees) and *len; 1
 * refused, -1 dockerd down (why set, *buf NULL either way). */
int image_stream_call(struct docker *d, const char *path, const char *header, long timeout_ms,
                      char **buf, size_t *len, char *why, size_t whylen);

/* Pulls ref (POST /images/create) with header (the X-Registry-Auth line, or
 * NULL). 0, 1 failed (err: "pull <ref>: <dockerd's why>"), -1 dockerd down. */
int image_pull_with(struct docker *d, const char *ref, const char *header, char *err,
                    size_t errlen);

/* 0 when ref is present (or was pulled now); 1 when it cannot be (err: "pull
 * <ref>: <why>", naming the image and its registry); -1 dockerd or the
 * control plane did not answer (the create comes again). */
int image_ensure(struct docker *d, const struct worker_conf *c, const struct worker_identity *id,
                 const char *ref, char *err, size_t errlen);

#endif
