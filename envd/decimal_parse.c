/*
 * Why not atoll or strtoll: both take a sign, leading spaces and trailing
 * junk ("5abc" is 5), and atoll's overflow is undefined. A header or query
 * parameter that is not exactly a number is refused instead.
 */
#include "decimal_parse.h"

#include <limits.h>

int decimal_parse(const char *s, long long *out)
{
    long long v = 0;

    if (*s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || v > (LLONG_MAX - (*s - '0')) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 0;
}
