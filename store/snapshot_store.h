/* snapshot_store.h: a workspace's snapshots (decision 0048), the one home of
 * their records. A snapshot is an image on the worker that made it; creates
 * from it are pinned to that worker. */
#ifndef CORRAL_SNAPSHOT_STORE_H
#define CORRAL_SNAPSHOT_STORE_H

#include "rconn.h"

#include <stddef.h>

#define SNAPSHOT_PREFIX "snap-" /* every snapshot id, so a template name can be told apart */
#define SNAPSHOT_IMAGE_REPO "corral-snap"
#define SNAPSHOT_ID_MAX 48

/* A snapshot's "state": pending until its worker says ready or failed.
 * UNKNOWN: an absent or unexpected word (the record keeps it as read). */
enum snapshot_state {
    SNAPSHOT_STATE_UNKNOWN = 0,
    SNAPSHOT_STATE_PENDING,
    SNAPSHOT_STATE_READY,
    SNAPSHOT_STATE_FAILED,
    SNAPSHOT_STATE_COUNT
};
/* The wire word ("" for UNKNOWN), and the state a word names. */
const char *snapshot_state_name(enum snapshot_state s);
enum snapshot_state snapshot_state_parse(const char *word);

struct snapshot_record {
    char id[SNAPSHOT_ID_MAX], sandbox[33], template_id[65], pool[33], worker[33];
    char image[96], state_text[16], name[129], reason[256];
    enum snapshot_state state; /* decoded from state_text */
    long long created_at;
    int fork; /* made for a fork: not listed, removed once its forks started */
};

/* 1 when id is spelled as a snapshot id (snap-<20 hex>). Pure. */
int snapshot_id_ok(const char *id);
/* The image a snapshot id names on its worker, "corral-snap:<id>". Pure. */
void snapshot_image(const char *id, char *out, size_t len);
/* 1 when image is a snapshot's (corral-snap:...), 0 otherwise. Pure. */
int snapshot_image_is(const char *image);

/* Records a "pending" snapshot. 0 or -1. */
int snapshot_insert(struct rconn *rc, const char *ws, const struct snapshot_record *s);
/* 1 found, 0 absent, -1 Redis. */
int snapshot_read(struct rconn *rc, const char *ws, const char *id, struct snapshot_record *out);
/* The worker's word on a snapshot it was asked for: READY or FAILED
 * (reason). Only the worker that holds it is heard. 1 changed, 0 not, -1. */
int snapshot_report(struct rconn *rc, const char *ws, const char *id, const char *wid,
                    enum snapshot_state state, const char *reason);
/* Deletes the record; *out is filled from it first. 1, 0 absent, -1. */
int snapshot_remove(struct rconn *rc, const char *ws, const char *id, struct snapshot_record *out);

/* ws's snapshots, oldest first. Free with free(). 0 or -1. */
int snapshot_list(struct rconn *rc, const char *ws, struct snapshot_record **out, size_t *n);

#endif
