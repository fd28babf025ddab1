/* record_read.c: a record's hash, or an index's string, read once. */
#include "record_read.h"

#include <stdio.h>

int record_hash_read(struct rconn *rc, const char *key, record_fill_fn fill, void *out)
{
    return record_from_reply(rconn_cmd(rc, 0, "HGETALL %s", key), fill, out);
}

int record_eval_int(struct rconn *rc, struct rscript *s, int nkeys, int nargs, const char **argv)
{
    redisReply *r = rconn_eval(rc, s, nkeys, nargs, argv);
    int n;

    if (!r)
        return -1;
    n = (int)reply_int(r, 0);
    freeReplyObject(r);
    return n;
}

int record_from_reply(redisReply *r, record_fill_fn fill, void *out)
{
    int found;

    if (!r)
        return -1;
    found = r->type == REDIS_REPLY_ARRAY && r->elements > 0;
    fill(found ? r : NULL, out);
    freeReplyObject(r);
    return found;
}

int record_string_read(struct rconn *rc, const char *key, char *out, size_t len)
{
    redisReply *r = rconn_cmd(rc, 0, "GET %s", key);
    int found;

    if (!r)
        return -1;
    found = reply_str(r) != NULL;
    if (found)
        snprintf(out, len, "%s", reply_str(r));
    freeReplyObject(r);
    return found;
}
