/* Logging to stderr (the container's log) and the monotonic clock. */
#include "envd.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

void envd_log(const char *fmt, ...)
{
    char line[1024];
    struct timespec ts;
    struct tm tm;
    va_list ap;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* One fprintf per line so lines from different threads do not interleave. */
    fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ envd: %s\n", tm.tm_year + 1900,
            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
            line);
}

long long envd_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
