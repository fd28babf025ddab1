#include "volume_store.h"

#include "id_list.h"
#include "keys.h"
#include "record_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill(const redisReply *h, void *record)
{
    struct volume_record *out = record;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; h && i + 1 < h->elements; i += 2) {
        const char *k = h->element[i]->str, *v = h->element[i + 1]->str ?: "";
        if (!k)
            continue;
        if (!strcmp(k, "id"))
            snprintf(out->id, sizeof(out->id), "%s", v);
        else if (!strcmp(k, "name"))
            snprintf(out->name, sizeof(out->name), "%s", v);
        else if (!strcmp(k, "pool"))
            snprintf(out->pool, sizeof(out->pool), "%s", v);
        else if (!strcmp(k, "worker"))
            snprintf(out->worker, sizeof(out->worker), "%s", v);
        else if (!strcmp(k, "created_at"))
            out->created_at = atoll(v);
    }
}

int volume_read(struct rconn *rc, const char *ws, const char *id, struct volume_record *out)
{
    char key[192];

    snprintf(key, sizeof(key), K_VOLUME, ws, id);
    return record_hash_read(rc, key, fill, out);
}

/* The id a name stands for in ws: 1, 0 none, -1. */
int volume_id_of(struct rconn *rc, const char *ws, const char *name, char id[VOLUME_ID_MAX])
{
    char key[128];
    redisReply *r;
    int found;

    snprintf(key, sizeof(key), K_VOLUMES, ws);
    r = rconn_cmd(rc, 0, "HGET %s %s", key, name);
    if (!r)
        return -1;
    found = reply_str(r) != NULL;
    if (found)
        snprintf(id, VOLUME_ID_MAX, "%s", reply_str(r));
    freeReplyObject(r);
    return found;
}

static int read_one(struct rconn *rc, const char *ws, const char *id, void *item)
{
    return volume_read(rc, ws, id, item);
}

int volume_list(struct rconn *rc, const char *ws, struct volume_record **out, size_t *n)
{
    char names[128];
    void *items;
    int rv;

    snprintf(names, sizeof(names), K_VOLUMES, ws);
    rv = id_list_read_all(rc, ws, rconn_cmd(rc, 0, "HVALS %s", names), sizeof(**out), read_one,
                          &items, n);
    *out = items;
    return rv;
}

/* The name is claimed first (HSETNX): two creates of one name cannot both win. */
int volume_store_add(struct rconn *rc, const char *ws, const struct volume_record *v)
{
    char names[128], key[192];
    redisReply *r;
    int claimed;

    snprintf(names, sizeof(names), K_VOLUMES, ws);
    snprintf(key, sizeof(key), K_VOLUME, ws, v->id);
    r = rconn_cmd(rc, 0, "HSETNX %s %s %s", names, v->name, v->id);
    claimed = r ? (int)reply_int(r, -1) : -1;
    if (r)
        freeReplyObject(r);
    if (claimed != 1)
        return claimed;
    r = rconn_cmd(rc, 0, "HSET %s id %s name %s pool %s worker %s created_at %lld", key, v->id,
                  v->name, v->pool, v->worker, v->created_at);
    if (!r) { /* the name is given back: no name without its volume */
        r = rconn_cmd(rc, 0, "HDEL %s %s", names, v->name);
        if (r)
            freeReplyObject(r);
        return -1;
    }
    freeReplyObject(r);
    return 1;
}

int volume_store_remove(struct rconn *rc, const char *ws, const struct volume_record *v)
{
    char names[128], key[192];
    redisReply *r;
    int found;

    snprintf(names, sizeof(names), K_VOLUMES, ws);
    snprintf(key, sizeof(key), K_VOLUME, ws, v->id);
    r = rconn_cmd(rc, 0, "DEL %s", key);
    if (!r)
        return -1;
    found = (int)reply_int(r, 0);
    freeReplyObject(r);
    if (found != 1)
        return 0;
    r = rconn_cmd(rc, 0, "HDEL %s %s", names, v->name);
    if (r)
        freeReplyObject(r);
    return 1;
}
