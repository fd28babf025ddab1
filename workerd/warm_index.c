#include "warm_index.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char sbid[72];
    char warm[40];
    char ctr[72];
};

static struct {
    pthread_mutex_t mu;
    struct entry *e;
    size_t n, cap;
} ix = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The entry whose field at off is value; mu held. */
static struct entry *find(size_t off, const char *value)
{
    for (size_t i = 0; i < ix.n; i++)
        if (strcmp((const char *)&ix.e[i] + off, value) == 0)
            return &ix.e[i];
    return NULL;
}

static int fits(const char *s, size_t len)
{
    return s && strlen(s) < len;
}

int warm_index_put(const char *sbid, const char *warm_id, const char *ctr)
{
    struct entry *e;
    int rc = 0;

    if (!fits(sbid, sizeof(e->sbid)) || !fits(warm_id, sizeof(e->warm)) ||
        !fits(ctr, sizeof(e->ctr)))
        return -1;
    pthread_mutex_lock(&ix.mu);
    e = find(offsetof(struct entry, sbid), sbid);
    if (!e && ix.n == ix.cap) {
        size_t cap = ix.cap ? 2 * ix.cap : 16;
        struct entry *grown = realloc(ix.e, cap * sizeof(*grown));
        if (grown) {
            ix.e = grown;
            ix.cap = cap;
        }
    }
    if (!e && ix.n < ix.cap)
        e = &ix.e[ix.n++];
    if (e) {
        snprintf(e->sbid, sizeof(e->sbid), "%s", sbid);
        snprintf(e->warm, sizeof(e->warm), "%s", warm_id);
        snprintf(e->ctr, sizeof(e->ctr), "%s", ctr);
    } else {
        rc = -1;
    }
    pthread_mutex_unlock(&ix.mu);
    return rc;
}

void warm_index_drop(const char *sbid)
{
    struct entry *e;

    if (!sbid)
        return;
    pthread_mutex_lock(&ix.mu);
    e = find(offsetof(struct entry, sbid), sbid);
    if (e)
        *e = ix.e[--ix.n];
    pthread_mutex_unlock(&ix.mu);
}

/* The field at off of the entry whose field at key_off is key, into out. */
static int lookup(size_t key_off, const char *key, size_t off, char *out, size_t len)
{
    struct entry *e;

    if (!key)
        return 0;
    pthread_mutex_lock(&ix.mu);
    e = find(key_off, key);
    if (e)
        snprintf(out, len, "%s", (const char *)e + off);
    pthread_mutex_unlock(&ix.mu);
    return e != NULL;
}

int warm_index_ctr(const char *sbid, char *out, size_t len)
{
    return lookup(offsetof(struct entry, sbid), sbid, offsetof(struct entry, ctr), out, len);
}

int warm_index_sbid(const char *warm_id, char *out, size_t len)
{
    return lookup(offsetof(struct entry, warm), warm_id, offsetof(struct entry, sbid), out, len);
}
