#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static const char *log_name = "corral";

void log_set_name(const char *name)
{
    log_name = name;
}

void log_msg(const char *level, const char *fmt, ...)
{
    char msg[1024];
    char stamp[32];
    struct timespec ts;
    struct tm tm;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    /* One fprintf per line so that lines from threads do not interleave. */
    fprintf(stderr, "%s.%03ldZ %s[%d] %s: %s\n", stamp, ts.tv_nsec / 1000000, log_name,
            (int)getpid(), level, msg);
}
