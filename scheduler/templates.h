/* templates.h: the templates on offer to a workspace. */
#ifndef CORRAL_TEMPLATES_H
#define CORRAL_TEMPLATES_H

#include "rconn.h"

#include <jansson.h>

/* The template names the live workers of ws's pool and of the unscoped fleet
 * offer, as the keys of an object (a worker Redis cannot be asked about adds
 * none). */
json_t *templates_offered(struct rconn *rc, const char *ws);

#endif
