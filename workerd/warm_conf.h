/* warm_conf.h: workerd.conf's warm_pool, the sandboxes a worker keeps started
 * ahead of need per (template, runtime) (decision 0082). Pure;
 * tests/workerd/unit_warm.c checks it. */
#ifndef WORKERD_WARM_CONF_H
#define WORKERD_WARM_CONF_H

#include <stddef.h>

#define WARM_KINDS_MAX 8
#define WARM_SIZE_MAX 16

struct warm_kind {
    char tmpl[65];
    char runtime[64];
    int size;
};

/* "base=2 python:runsc=1" (spaces or commas between items; the runtime
 * defaults to runc; sizes 0..WARM_SIZE_MAX; a (template, runtime) once) into
 * out[*n]. "" or "0"... means none. 0, or -1 with err naming the item. */
int warm_conf_parse(const char *s, struct warm_kind out[WARM_KINDS_MAX], int *n, char *err,
                    size_t errlen);

#endif
