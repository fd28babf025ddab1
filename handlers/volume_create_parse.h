/* volume_create_parse.h: the body of a volume create, E2B's POST /volumes and
 * the native POST /v1/volumes ({"name"}), checked (pure: h_volumes.c reads
 * and answers). */
#ifndef CORRAL_VOLUME_CREATE_PARSE_H
#define CORRAL_VOLUME_CREATE_PARSE_H

#include <jansson.h>
#include <stddef.h>

/* 0 with *name (body's: valid while body is), or -1 with err naming the
 * field. */
int volume_create_parse(const json_t *body, const char **name, char *err, size_t errlen);

#endif
