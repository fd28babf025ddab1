#include "live.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct live *current;

struct live *live_make(struct settings *s, char *err, size_t errlen)
{
    struct live *l = calloc(1, sizeof(*l));

    if (!l) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (s->rules.n && !(l->tls = tls_conf_load(s, err, errlen))) {
        free(l);
        return NULL;
    }
    atomic_init(&l->refs, 1);
    l->s = *s;
    memset(s, 0, sizeof(*s));
    return l;
}

void live_publish(struct live *l)
{
    pthread_mutex_lock(&lock);
    struct live *old = current;
    current = l;
    pthread_mutex_unlock(&lock);
    if (old)
        live_release(old);
}

struct live *live_acquire(void)
{
    pthread_mutex_lock(&lock);
    struct live *l = current;
    if (l)
        atomic_fetch_add(&l->refs, 1);
    pthread_mutex_unlock(&lock);
    return l;
}

void live_release(struct live *l)
{
    if (atomic_fetch_sub(&l->refs, 1) != 1)
        return;
    tls_conf_free(l->tls);
    settings_free(&l->s);
    free(l);
}
