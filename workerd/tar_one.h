/* tar_one.h: a tar archive of one regular file, the body the Engine API's
 * PUT /containers/{id}/archive takes to put a file into a container, stopped
 * or not. Pure (tests/workerd/unit_workerd.c). */
#ifndef WORKERD_TAR_ONE_H
#define WORKERD_TAR_ONE_H

#include <stddef.h>

#define TAR_BLOCK 512

/* The archive of one file named name (at most 99 bytes, no directory), mode
 * 0644, owned by root, holding len bytes of data: its header, the data padded
 * to a block, and the two empty blocks that end an archive. malloc'ed into
 * *out (*outlen bytes); 0, or -1 (name too long, out of memory). */
int tar_one(const char *name, const void *data, size_t len, char **out, size_t *outlen);

#endif
