/* registry_client.h: what the control plane asks Corral's registry itself
 * (decision 0081): the repositories, a repository's tags, a tag's manifest
 * digest, and a manifest deleted. Each call carries a token it signs for
 * just that scope (registry_token.h), valid for one minute; the key's PEM is
 * never logged nor put in an error. */
#ifndef CORRAL_REGISTRY_CLIENT_H
#define CORRAL_REGISTRY_CLIENT_H

#include "corral_conf.h"

#include <jansson.h>
#include <stddef.h>

#define REGISTRY_DIGEST_MAX 80

struct registry_client {
    const struct corral_conf *conf;
    char base[300]; /* registry_url, or http://<registry>, without a trailing / */
};

/* 0, or -1 when corral.conf names no registry. */
int registry_client_init(struct registry_client *c, const struct corral_conf *conf);

/* Every repository in the catalog (a JSON array of strings, caller decrefs),
 * or NULL with err said. */
json_t *registry_catalog(struct registry_client *c, char *err, size_t errlen);
/* The tags of repo (an empty array when the registry knows none), or NULL. */
json_t *registry_tags(struct registry_client *c, const char *repo, char *err, size_t errlen);
/* The manifest digest repo:tag names: 1, 0 absent, -1 (err). */
int registry_digest(struct registry_client *c, const char *repo, const char *tag,
                    char digest[REGISTRY_DIGEST_MAX], char *err, size_t errlen);
/* Deletes the manifest (and so every tag naming it): 0 gone or already
 * absent, -1 (err). */
int registry_manifest_delete(struct registry_client *c, const char *repo, const char *digest,
                             char *err, size_t errlen);

#endif
