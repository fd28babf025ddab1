/* An integer query parameter in a range (query_int_parse.h). */
#include "query_int_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int query_int_parse(const struct request *req, const char *name, long long min, long long max,
                    long long dflt, long long *out, char *err, size_t errlen)
{
    char text[32], *end;
    int given = request_query_strict(req, name, text, sizeof(text));
    long long v = dflt;

    if (given > 0) {
        errno = 0;
        v = strtoll(text, &end, 10);
        /* ERANGE: past what a long long holds, not the largest one. */
        if (end == text || *end || errno == ERANGE || v < min || v > max)
            given = -1;
    }
    if (given < 0) {
        snprintf(err, errlen, "%s: must be an integer in [%lld, %lld]", name, min, max);
        return -1;
    }
    *out = v;
    return 0;
}
