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
