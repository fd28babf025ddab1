/* templates.c: which templates a workspace may create from, read from the
 * worker records (the key layout of a worker lives with the worker's store;
 * this reader is here until scheduler/worker_store.c is its home). */
#include "templates.h"

#include "keys.h"

#include <stdio.h>

/* Adds the names in one worker's templates_json to seen. */
static void add_worker(struct rconn *rc, const char *pool, const char *wid, json_t *seen)
{
    char key[160];
    redisReply *t;
    json_t *list, *v;
    size_t i;

    snprintf(key, sizeof(key), K_WORKER, pool, wid);
    t = rconn_cmd(rc, 0, "HGET %s templates_json", key);
    list = reply_str(t) ? json_loads(reply_str(t), 0, NULL) : NULL;
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v))
            json_object_set(seen, json_string_value(v), json_true());
    }
    json_decref(list);
    if (t)
        freeReplyObject(t);
}

json_t *templates_offered(struct rconn *rc, const char *ws)
{
    const char *pools[2] = {ws, ""};
    json_t *seen = json_object();

    for (int p = 0; p < (*ws ? 2 : 1); p++) {
        char key[128];
        redisReply *ids;
        snprintf(key, sizeof(key), K_WORKERS, pools[p]);
        ids = rconn_cmd(rc, 0, "ZRANGE %s 0 -1", key);
        for (size_t i = 0; ids && i < ids->elements; i++)
            add_worker(rc, pools[p], ids->element[i]->str, seen);
        if (ids)
            freeReplyObject(ids);
    }
    return seen;
}
