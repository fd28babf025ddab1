/* id_list.h: ids a store read hands back (workspaces, sandboxes due a sweep),
 * copied out of the reply so that callers never hold a Redis reply. */
#ifndef CORRAL_ID_LIST_H
#define CORRAL_ID_LIST_H

#include "rconn.h"

#include <hiredis/hiredis.h>
#include <stddef.h>

struct id_list {
    size_t n;
    char (*id)[65];
};

/* The strings of an array reply r (NULL: Redis failed), freeing r. 0, or -1
 * (out empty). */
int id_list_from_reply(redisReply *r, struct id_list *out);
void id_list_free(struct id_list *l);

/* Reads one record of ws by id into item: 1 found, 0 absent, -1 Redis. */
typedef int (*id_read_fn)(struct rconn *rc, const char *ws, const char *id, void *item);
/* The records an array reply of ids names (NULL: Redis failed; freed here),
 * each read by read into a calloc'd array of `size` byte items (*out, *n),
 * leaving out those gone meanwhile. 0, or -1 (*out NULL). */
int id_list_read_all(struct rconn *rc, const char *ws, redisReply *ids, size_t size,
                     id_read_fn read, void **out, size_t *n);

#endif
