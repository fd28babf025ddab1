/* query_int_parse.h: an integer query parameter in a range (pure: reads
 * only req->query). telemetry_query.c answers its refusal; logs_query_parse.c
 * parses with it. */
#ifndef CORRAL_QUERY_INT_PARSE_H
#define CORRAL_QUERY_INT_PARSE_H

#include "request.h"

#include <stddef.h>

/* The decimal integer parameter name in [min, max]; dflt when absent. 0 with
 * *out, or -1 with err naming it (present but empty, unreadable, not a
 * number or out of range); *out is left alone then. */
int query_int_parse(const struct request *req, const char *name, long long min, long long max,
                    long long dflt, long long *out, char *err, size_t errlen);

#endif
