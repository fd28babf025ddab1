/* id_list.h: ids a store read hands back (workspaces, sandboxes due a sweep),
 * copied out of the reply so that callers never hold a Redis reply. */
#ifndef CORRAL_ID_LIST_H
#define CORRAL_ID_LIST_H

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

#endif
