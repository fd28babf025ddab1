/* Logging to stderr (the container's log) and the clocks. */
#include "envd.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

void envd_utc_now(char *out, size_t outsz)
{
    struct timespec ts;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(out, outsz, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

void envd_log(const char *fmt, ...)
{
    char line[1024], ts[64];
    va_list ap;

    envd_utc_now(ts, sizeof(ts));
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* One fprintf per line so lines from different threads do not interleave. */
    fprintf(stderr, "%s envd: %s\n", ts, line);
}

long long envd_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
