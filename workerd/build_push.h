/* build_push.h: a finished build's last layer tagged as the build's target
 * ("HOST:PORT/corral/…/tpl-…:bld-…") and pushed to Corral's registry with a
 * push token (docs/templates.md). */
#ifndef WORKERD_BUILD_PUSH_H
#define WORKERD_BUILD_PUSH_H

#include "docker_api.h"
#include "state_file.h"
#include "worker_conf.h"

#define DIGEST_MAX 80

/* The digest of the push stream's final aux message ({"aux": {"Tag",
 * "Digest", "Size"}}) into digest (DIGEST_MAX). 0, or -1 none. Pure. */
int build_push_digest(const char *buf, size_t len, char *digest);

/* Tags image as target and pushes it with header (the X-Registry-Auth line,
 * or NULL). 0 with digest; 1 failed (err); -1 dockerd down. */
int build_push_with(struct docker *d, const char *image, const char *target, const char *header,
                    char *digest, char *err, size_t errlen);

/* Tags image as target and pushes it, with a push token asked of the
 * control plane. 0 with digest; 1 failed (err); -1
 * dockerd or the control plane did not answer. */
int build_push(struct docker *d, const struct worker_conf *c, const struct worker_identity *id,
               const char *image, const char *target, char *digest, char *err, size_t errlen);

#endif
