#include "conf_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int conf_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int conf_port(const char *p, unsigned *port)
{
    long v;

    if (*p == '\0' || strlen(p) > 5 || strspn(p, "0123456789") != strlen(p))
        return -1;
    v = strtol(p, NULL, 10);
    if (v < 1 || v > 65535)
        return -1;
    *port = (unsigned)v;
    return 0;
}
