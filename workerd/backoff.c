#include "worker.h"

#include "clock.h"

#include <stdlib.h>

void backoff_init(struct backoff *b, long base_ms, long max_ms)
{
    b->base_ms = base_ms;
    b->max_ms = max_ms;
    b->cur_ms = base_ms;
}

void backoff_reset(struct backoff *b)
{
    b->cur_ms = b->base_ms;
}

/* Jitter keeps a fleet of workers that lost the control plane at the same
 * moment from coming back in one synchronized wave. */
long backoff_next(struct backoff *b)
{
    long half = b->cur_ms / 2;
    long d = half + (half > 0 ? random() % (half + 1) : 0);

    b->cur_ms = b->cur_ms * 2 > b->max_ms ? b->max_ms : b->cur_ms * 2;
    return d;
}

int sleep_unless_stopped(long ms, volatile sig_atomic_t *stop)
{
    while (ms > 0) {
        long step = ms > 100 ? 100 : ms;
        if (*stop)
            return 1;
        clock_sleep_ms(step);
        ms -= step;
    }
    return *stop ? 1 : 0;
}
