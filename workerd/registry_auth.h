/* registry_auth.h: a pull or push token for Corral's registry, asked of the
 * control plane (POST /v1/worker/registry-token, docs/templates.md), and the
 * X-Registry-Auth header that hands it to dockerd for one pull or push.
 *
 * A token is a secret: it lives in these buffers only for the call that needs
 * it (zeroed after), never in a log line or an error message. */
#ifndef WORKERD_REGISTRY_AUTH_H
#define WORKERD_REGISTRY_AUTH_H

#include "state_file.h"
#include "worker_conf.h"

#include <stddef.h>

#define REGISTRY_TOKEN_MAX 4096
/* "X-Registry-Auth: " and base64url of {"registrytoken": "<token>"}. */
#define REGISTRY_HEADER_MAX (REGISTRY_TOKEN_MAX * 2)

/* The repository of an image reference "HOST[:PORT]/corral/…(@sha256:…|:tag)"
 * (pure): "corral/…" in repo, its registry "HOST[:PORT]" in host, and what
 * follows as the tag to pull ("sha256:…" or the tag) in tag. 0, or -1 when ref
 * names no registry host. */
int registry_ref_split(const char *ref, char *host, size_t hostlen, char *repo, size_t repolen,
                       char *tag, size_t taglen);

/* Asks the control plane for a token on repo (push 1: push rights). 0 with
 * header set to the whole X-Registry-Auth header line; 1 refused (err says
 * the status, never the token); 2 a push held by a registry garbage
 * collection (503: retry later); -1 the control plane unreachable. */
int registry_auth_header(const struct worker_conf *c, const struct worker_identity *id,
                         const char *repo, int push, char *header, size_t len, char *err,
                         size_t errlen);

#endif
