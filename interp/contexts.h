/* contexts.h: the server's code contexts (decision 0088): each a kernel of
 * its own with its language and cwd, one execution at a time; the default
 * context of a language is made on its first use. */
#ifndef CORRAL_INTERP_CONTEXTS_H
#define CORRAL_INTERP_CONTEXTS_H

#include "kernel.h"

#include <jansson.h>
#include <pthread.h>

#define CONTEXTS_MAX 64
#define CONTEXT_ID_HEX 32

struct context {
    char id[CONTEXT_ID_HEX + 1];
    int is_default;
    int refs;            /* callers holding it (the table's mutex) */
    int removed;         /* out of the table: freed by the last holder */
    pthread_mutex_t run; /* held for an execution, a restart, a removal */
    struct kernel k;
};

/* Where kernels' connection files go, the cwd of a context made without
 * one, and how long a kernel may take to start. */
void contexts_init(const char *dir, const char *default_cwd, long start_ms);

/* A new context of lang in cwd (NULL: the default cwd), its kernel
 * started. Its {id, language, cwd} in *info. 0; -1 with err and the HTTP
 * status to answer (400 for an unknown language, 503 when full or the
 * kernel fails to start). */
int contexts_create(const char *lang, const char *cwd, json_t **info, int *status, char *err,
                    size_t errlen);

/* The context id, or lang's default one (made now when missing), locked
 * for an execution: contexts_release after. NULL with err and status (404:
 * no such context). A context whose kernel died is started afresh here. */
struct context *contexts_acquire(const char *id, const char *lang, int *status, char *err,
                                 size_t errlen);
void contexts_release(struct context *c);

/* [{id, language, cwd}] of every context. */
json_t *contexts_list(void);

/* Stops and removes id; restarts id's kernel (its state gone). 0, or -1:
 * no such context (404), or the kernel failed to start again (503). */
int contexts_remove(const char *id);
int contexts_restart(const char *id, char *err, size_t errlen);

/* Stops every kernel: the server is ending. */
void contexts_stop_all(void);

#endif
