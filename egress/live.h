/* live.h: the configuration in force, swapped whole on a reload. A
 * connection takes a reference when it starts and keeps that configuration
 * (policy, rules, upstream, CA) until it ends: a reload changes what new
 * connections get, never the rules under an open tunnel. */
#ifndef CORRAL_EGRESS_LIVE_H
#define CORRAL_EGRESS_LIVE_H

#include "settings.h"
#include "tls_conf.h"

#include <stdatomic.h>

struct live {
    atomic_int refs;
    struct settings s;
    struct tls_conf *tls; /* NULL without rules */
};

/* Takes s (left zeroed) and loads what interception needs. NULL with err. */
struct live *live_make(struct settings *s, char *err, size_t errlen);

/* Makes l the configuration new connections get (the caller's reference
 * passes to it); the one it replaces is freed once its last connection ends. */
void live_publish(struct live *l);

/* The configuration in force, referenced for the caller; NULL before the
 * first live_publish. */
struct live *live_acquire(void);
void live_release(struct live *l);

#endif
