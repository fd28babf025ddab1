#include "sched_error.h"

#include <stdarg.h>
#include <stdio.h>

void sched_error_set(struct sched_error *e, int status, const char *fmt, ...)
{
    va_list ap;

    e->status = status;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
}
