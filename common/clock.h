/* clock.h: wall-clock milliseconds, the unit of every deadline stored in Redis. */
#ifndef CORRAL_CLOCK_H
#define CORRAL_CLOCK_H

#include <stdint.h>

int64_t clock_now_ms(void);
void clock_sleep_ms(int64_t ms);

#endif
