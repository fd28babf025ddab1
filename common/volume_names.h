/* volume_names.h: how a volume and a mount are spelled (decision 0049), for
 * the control plane that checks a create and the worker that mounts it. */
#ifndef CORRAL_VOLUME_NAMES_H
#define CORRAL_VOLUME_NAMES_H

#include <stddef.h>

#define VOLUME_ID_MAX 32
#define VOLUME_MOUNTS_MAX 8

/* A name [A-Za-z0-9][A-Za-z0-9._-]{0,63}. */
int volume_name_ok(const char *name);
/* An id vol-<20 hex>. */
int volume_id_ok(const char *id);
/* Docker's name of a volume: corral-vol-<20 hex>. */
int volume_docker_name_ok(const char *name);
void volume_docker_name(const char *id, char *out, size_t len);
/* A mount path: absolute, normalised, not "/" and not under /proc, /sys,
 * /dev or /.corral (envd's). */
int volume_path_ok(const char *path);

#endif
