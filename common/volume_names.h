/* volume_names.h: how a volume and a mount are spelled (decision 0049), for
 * the control plane that checks a create and the worker that mounts it. */
#ifndef CORRAL_VOLUME_NAMES_H
#define CORRAL_VOLUME_NAMES_H

#include <stddef.h>

#define VOLUME_ID_MAX 32
#define VOLUME_MOUNTS_MAX 8
/* The largest file one upload of the volume file API writes (decision 0071):
 * corral-api refuses a longer body before it reaches the worker, and the
 * worker stops at it whatever it is sent. nginx's /volumecontent/ location
 * (conf/nginx/corral-api.conf.in) says the same, 100m, so that a larger body
 * is refused before it is spooled. */
#define VOLUME_FILE_MAX (100LL * 1024 * 1024)

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
