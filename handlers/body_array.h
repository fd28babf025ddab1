/* body_array.h: a request body's JSON array, every element parsed into one
 * element of a vector (pure). The worker's batch routes (h_telemetry.c,
 * h_worker_audit.c) check a whole body before any of it is written, so
 * either every element is parsed and kept, or none is. */
#ifndef CORRAL_BODY_ARRAY_H
#define CORRAL_BODY_ARRAY_H

#include <jansson.h>
#include <stddef.h>

/* How one element is parsed and freed. */
struct body_array_item {
    size_t size; /* bytes of one parsed element */
    /* Element i of the array into elem (zeroed before): 0, or -1 with err,
     * the whole message the caller answers. */
    int (*parse)(const json_t *item, size_t i, void *elem, void *ctx, char *err, size_t errlen);
    /* Frees what elem holds (not elem), also after its parse failed. */
    void (*free)(void *elem);
    void *ctx; /* passed to parse */
};

enum body_array_status {
    BODY_ARRAY_OK,
    BODY_ARRAY_SHAPE, /* not an array, or more than max elements: the caller words it */
    BODY_ARRAY_ITEM,  /* an element refused: err says why */
    BODY_ARRAY_NOMEM,
};

/* arr's elements parsed into *out (malloc'ed, *n elements; freed with
 * body_array_free). On any other status *out is NULL, nothing kept. */
enum body_array_status body_array_parse(const json_t *arr, size_t max,
                                        const struct body_array_item *how, void **out, size_t *n,
                                        char *err, size_t errlen);

/* The answer st becomes: 0 (OK), 400 (ITEM: err already says why; SHAPE:
 * "<field>: must be an array of at most <max><unit>"), 500 (out of memory). */
int body_array_answer(enum body_array_status st, const char *field, size_t max, const char *unit,
                      char *err, size_t errlen);

/* Frees v, n elements parsed by body_array_parse, and what each holds. */
void body_array_free(void *v, size_t n, const struct body_array_item *how);

#endif
