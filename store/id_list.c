#include "id_list.h"

#include <stdio.h>
#include <stdlib.h>

int id_list_from_reply(redisReply *r, struct id_list *out)
{
    *out = (struct id_list){0};
    if (!r)
        return -1;
    if (r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        return -1;
    }
    out->id = calloc(r->elements + 1, sizeof(*out->id));
    for (size_t i = 0; out->id && i < r->elements; i++)
        if (r->element[i]->str)
            snprintf(out->id[out->n++], sizeof(out->id[0]), "%s", r->element[i]->str);
    freeReplyObject(r);
    return out->id ? 0 : -1;
}

void id_list_free(struct id_list *l)
{
    free(l->id);
    *l = (struct id_list){0};
}

int id_list_read_all(struct rconn *rc, const char *ws, redisReply *ids, size_t size,
                     id_read_fn read, void **out, size_t *n)
{
    struct id_list l;
    char *items;

    *out = NULL;
    *n = 0;
    if (id_list_from_reply(ids, &l) != 0)
        return -1;
    items = calloc(l.n + 1, size);
    for (size_t i = 0; items && i < l.n; i++)
        *n += read(rc, ws, l.id[i], items + *n * size) == 1;
    id_list_free(&l);
    *out = items;
    return items ? 0 : -1;
}
