/* http_edit.h: a rule's headers set on a request head. Pure. */
#ifndef CORRAL_EGRESS_HTTP_EDIT_H
#define CORRAL_EGRESS_HTTP_EDIT_H

#include <stddef.h>

/* head[0..head_len) is a complete, checked head (http_head_parse). The copy
 * returned (malloc'd, its length in *out_len; NULL when memory ran out) has
 * every header named in names[0..n) (any case) removed and names[i]:
 * values[i] added before the blank line, in order: the rule replaces what
 * the client sent. The request line and every other header are kept. */
char *http_head_set(const char *head, size_t head_len, const char *const *names,
                    const char *const *values, size_t n, size_t *out_len);

#endif
