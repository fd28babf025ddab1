/* clock.h: wall-clock milliseconds, the unit of every deadline stored in Redis. */
#ifndef CORRAL_CLOCK_H
#define CORRAL_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

int64_t clock_now_ms(void);
/* The time in a Redis stream entry's id ("1733400000123-0": ms since the
 * epoch, Redis's clock); 0 for NULL or anything else. */
int64_t clock_stream_id_ms(const char *id);
void clock_sleep_ms(int64_t ms);
/* ts moved ms later, normalised: the deadline pthread_cond_timedwait takes
 * (CLOCK_REALTIME), from now (clock_gettime first) or from the last one. */
void clock_timespec_add_ms(struct timespec *ts, int64_t ms);

/* Waits on c (mu held) for a signal, at most until until_ms (clock_now_ms()):
 * at once when that is past. The condition must use the realtime clock (the
 * default). */
void clock_cond_wait_until(pthread_cond_t *c, pthread_mutex_t *mu, int64_t until_ms);

#endif
