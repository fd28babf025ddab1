#include "sbtable.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

void sbtable_init(struct sbtable *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
}

void sbtable_free(struct sbtable *t)
{
    free(t->v);
    pthread_mutex_destroy(&t->mu);
}

static struct sb_entry *find(struct sbtable *t, const char *sbid)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->v[i].st.sbid, sbid) == 0)
            return &t->v[i];
    return NULL;
}

struct sb_entry *sbtable_get(struct sbtable *t, const char *sbid)
{
    return find(t, sbid);
}

static struct sb_entry *append(struct sbtable *t)
{
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 16;
        struct sb_entry *v = realloc(t->v, (size_t)cap * sizeof(*v));
        if (!v)
            return NULL;
        t->v = v;
        t->cap = cap;
    }
    memset(&t->v[t->n], 0, sizeof(t->v[0]));
    return &t->v[t->n++];
}

int sbtable_put(struct sbtable *t, const struct ctr_state *st)
{
    struct sb_entry *e;
    int rc = 0;

    pthread_mutex_lock(&t->mu);
    e = find(t, st->sbid);
    if (!e) {
        e = append(t);
        if (e)
            e->dirty = 1;
    }
    if (!e) {
        rc = -1;
    } else {
        if (e->st.state != st->state || strcmp(e->st.reason, st->reason) != 0)
            e->dirty = 1;
        e->st = *st;
        e->seen = 1;
        e->drop = 0;
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

void sbtable_del(struct sbtable *t, const char *sbid)
{
    struct sb_entry *e;

    pthread_mutex_lock(&t->mu);
    e = find(t, sbid);
    if (e)
        *e = t->v[--t->n];
    pthread_mutex_unlock(&t->mu);
}

/* A paused sandbox holds its memory and its slot here: it counts as live. */
int sbtable_live(const struct sb_entry *e)
{
    return e->st.state == SB_RUNNING || e->st.state == SB_PAUSED;
}

int sbtable_count_running(struct sbtable *t)
{
    int n = 0;

    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n; i++)
        n += sbtable_live(&t->v[i]);
    pthread_mutex_unlock(&t->mu);
    return n;
}

int sbtable_any_dirty(struct sbtable *t)
{
    int dirty = 0;

    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n && !dirty; i++)
        dirty = t->v[i].dirty;
    pthread_mutex_unlock(&t->mu);
    return dirty;
}

int sbtable_expect_running(struct sbtable *t, const char *sbid)
{
    struct sb_entry *e;
    int yes;

    pthread_mutex_lock(&t->mu);
    e = find(t, sbid);
    yes = e && sbtable_live(e);
    pthread_mutex_unlock(&t->mu);
    return yes;
}

int sbtable_record(struct sbtable *t, const struct ctr_state *st, int drop)
{
    struct sb_entry *e;

    if (sbtable_put(t, st) != 0)
        return -1;
    pthread_mutex_lock(&t->mu);
    e = find(t, st->sbid);
    if (e) {
        e->dirty = 1;
        e->drop = drop;
    }
    pthread_mutex_unlock(&t->mu);
    return 0;
}

int sbtable_has(struct sbtable *t, const char *sbid)
{
    int has;

    pthread_mutex_lock(&t->mu);
    has = find(t, sbid) != NULL;
    pthread_mutex_unlock(&t->mu);
    return has;
}

void sbtable_tier(struct sbtable *t, const char *sbid, char *out, size_t len)
{
    struct sb_entry *e;

    pthread_mutex_lock(&t->mu);
    e = find(t, sbid);
    if (e)
        snprintf(out, len, "%s", e->st.tier);
    pthread_mutex_unlock(&t->mu);
}

int sbtable_running_ids(struct sbtable *t, char (*ids)[CTR_ID_MAX], int max)
{
    int n = 0;

    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n && n < max; i++)
        if (t->v[i].st.state == SB_RUNNING)
            snprintf(ids[n++], CTR_ID_MAX, "%s", t->v[i].st.sbid);
    pthread_mutex_unlock(&t->mu);
    return n;
}
