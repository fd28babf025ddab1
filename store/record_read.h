/* record_read.h: the two reads every record store makes, written once: a
 * hash into a typed record through the store's own fill, and a string key
 * (an index: id -> workspace). */
#ifndef CORRAL_RECORD_READ_H
#define CORRAL_RECORD_READ_H

#include "rconn.h"

#include <stddef.h>

/* A store's HGETALL reply (NULL: absent) into its record. */
typedef void (*record_fill_fn)(const redisReply *h, void *out);

/* An HGETALL-shaped reply (NULL: Redis failed; freed here) through fill: 1
 * found, 0 absent (fill(NULL)), -1 Redis. */
int record_from_reply(redisReply *r, record_fill_fn fill, void *out);
/* HGETALL key through fill, as record_from_reply. */
int record_hash_read(struct rconn *rc, const char *key, record_fill_fn fill, void *out);

/* A script whose answer is an integer: it, or -1 when Redis failed. */
int record_eval_int(struct rconn *rc, struct rscript *s, int nkeys, int nargs, const char **argv);

/* GET key into out (len bytes): 1 found, 0 absent, -1 Redis. */
int record_string_read(struct rconn *rc, const char *key, char *out, size_t len);

/* In a fill's loop over field k with value v: copies or converts a known one. */
#define RECORD_TEXT(field, dst)                                                                    \
    if (strcmp(k, field) == 0)                                                                     \
        snprintf(dst, sizeof(dst), "%s", v);
#define RECORD_NUM(field, dst)                                                                     \
    if (strcmp(k, field) == 0)                                                                     \
        (dst) = atoll(v);

#endif
