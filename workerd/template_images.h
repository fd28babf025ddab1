/* template_images.h: a deleted template's images leave this worker
 * (decision 0080): every local name of its registry repository is removed,
 * except those a container still uses, which go with their last sandbox's
 * next removal command. */
#ifndef WORKERD_TEMPLATE_IMAGES_H
#define WORKERD_TEMPLATE_IMAGES_H

#include "docker_api.h"

#include <stddef.h>

/* 1 when ref ("host/repo:tag" or "host/repo@digest") is one of repository's
 * names. Pure. */
int template_ref_of(const char *ref, const char *repository);

/* Removes repository's local names; *kept counts those in use. 0, or -1
 * dockerd did not answer. */
int template_images_remove(struct docker *d, const char *repository, int *removed, int *kept,
                           char *err, size_t errlen);

#endif
