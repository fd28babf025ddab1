#include "clock.h"

#include <stdlib.h>
#include <time.h>

int64_t clock_stream_id_ms(const char *id)
{
    char *end;
    long long ms = id ? strtoll(id, &end, 10) : 0;

    return id && end != id && *end == '-' && ms > 0 ? (int64_t)ms : 0;
}

int64_t clock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void clock_sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

void clock_timespec_add_ms(struct timespec *ts, int64_t ms)
{
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

void clock_cond_wait_until(pthread_cond_t *c, pthread_mutex_t *mu, int64_t until_ms)
{
    struct timespec until;
    int64_t left = until_ms - clock_now_ms();

    if (left <= 0)
        return;
    clock_gettime(CLOCK_REALTIME, &until);
    clock_timespec_add_ms(&until, left);
    pthread_cond_timedwait(c, mu, &until);
}
