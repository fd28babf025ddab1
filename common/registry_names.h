/* registry_names.h: where a template lives in Corral's registry (docs/templates.md).
 * Pure: the control plane builds names with it and the registry-token route
 * reads a workspace back out of one, so both spell them one way. */
#ifndef CORRAL_REGISTRY_NAMES_H
#define CORRAL_REGISTRY_NAMES_H

#include <stddef.h>

#define REGISTRY_REPO_MAX 96
#define REGISTRY_FLEET "fleet"

/* "corral/w<ws>/<tpl>", or "corral/fleet/<tpl>" for the fleet (ws ""). 0, or
 * -1 when ws or tpl is not spelled as one (16 hex; [a-z0-9-]{1,48}) or out is
 * too short. */
int registry_repo(const char *ws, const char *tpl, char *out, size_t len);

/* The workspace and template a repository names (ws "" for the fleet). 0, or
 * -1 when repo is not one registry_repo would make. ws must hold 17 bytes,
 * tpl 49. */
int registry_repo_parse(const char *repo, char ws[17], char tpl[49]);

#endif
