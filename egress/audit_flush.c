/* audit_flush.c: the thread that sends transform_audit's counts to the
 * resolver once a second (transform_audit.h). */
#include "transform_audit.h"

#include "live.h"
#include "resolver.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *flush_loop(void *arg)
{
    struct timespec pause = {AUDIT_FLUSH_MS / 1000, (AUDIT_FLUSH_MS % 1000) * 1000000L};
    char err[128];

    (void)arg;
    for (;;) {
        nanosleep(&pause, NULL);
        char *line = transform_audit_take();
        if (!line)
            continue;
        struct live *l = live_acquire();
        json_t *ans =
            l->s.resolver[0] ? resolver_send(l->s.resolver, line, err, sizeof(err)) : NULL;
        if (!ans) {
            fprintf(stderr, "egress sandbox=%s audit: not delivered (%s); kept for the next try\n",
                    l->s.sandbox, l->s.resolver[0] ? err : "no resolver");
            transform_audit_return(line);
        }
        live_release(l);
        json_decref(ans);
        free(line);
    }
    return NULL;
}

int transform_audit_start(void)
{
    pthread_t th;

    if (pthread_create(&th, NULL, flush_loop, NULL) != 0)
        return -1;
    pthread_detach(th);
    return 0;
}
