/* volume_store.h: a workspace's volume records (decision 0049), their one home:
 * a hash per volume and the workspace's name -> id map. */
#ifndef CORRAL_VOLUME_STORE_H
#define CORRAL_VOLUME_STORE_H

#include "rconn.h"
#include "volume_names.h"

#include <stddef.h>

struct volume_record {
    char id[VOLUME_ID_MAX], name[65], pool[33], worker[33];
    long long created_at;
};

/* 1 found, 0 absent, -1 Redis. */
int volume_read(struct rconn *rc, const char *ws, const char *id, struct volume_record *out);
/* ws's volumes; free(*out). 0 or -1. */
int volume_list(struct rconn *rc, const char *ws, struct volume_record **out, size_t *n);
/* The id ws's volume `name` stands for: 1, 0 none, -1 Redis. */
int volume_id_of(struct rconn *rc, const char *ws, const char *name, char id[VOLUME_ID_MAX]);
/* Records v under its name: 1, 0 the name is taken (nothing written), -1 Redis. */
int volume_store_add(struct rconn *rc, const char *ws, const struct volume_record *v);
/* Removes v's record and its name: 1, 0 another delete won, -1 Redis. */
int volume_store_remove(struct rconn *rc, const char *ws, const struct volume_record *v);

#endif
