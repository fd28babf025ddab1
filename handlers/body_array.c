/* A request body's array parsed element by element (body_array.h). */
#include "body_array.h"

#include <stdio.h>
#include <stdlib.h>

void body_array_free(void *v, size_t n, const struct body_array_item *how)
{
    for (size_t i = 0; v && i < n; i++)
        how->free((char *)v + i * how->size);
    free(v);
}

enum body_array_status body_array_parse(const json_t *arr, size_t max,
                                        const struct body_array_item *how, void **out, size_t *n,
                                        char *err, size_t errlen)
{
    char *v;

    *out = NULL;
    *n = 0;
    if (!json_is_array(arr) || json_array_size(arr) > max)
        return BODY_ARRAY_SHAPE;
    /* One more than needed: an empty array is still a vector, not NULL. */
    v = calloc(json_array_size(arr) + 1, how->size);
    if (!v)
        return BODY_ARRAY_NOMEM;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        if (how->parse(json_array_get(arr, i), i, v + i * how->size, how->ctx, err, errlen) != 0) {
            body_array_free(v, i + 1, how); /* element i too: it may hold part of its parse */
            return BODY_ARRAY_ITEM;
        }
    }
    *out = v;
    *n = json_array_size(arr);
    return BODY_ARRAY_OK;
}

int body_array_answer(enum body_array_status st, const char *field, size_t max, const char *unit,
                      char *err, size_t errlen)
{
    switch (st) {
    case BODY_ARRAY_OK:
        return 0;
    case BODY_ARRAY_NOMEM:
        snprintf(err, errlen, "out of memory");
        return 500;
    case BODY_ARRAY_SHAPE:
        snprintf(err, errlen, "%s: must be an array of at most %zu%s", field, max, unit);
        return 400;
    case BODY_ARRAY_ITEM:
        break;
    }
    return 400;
}
