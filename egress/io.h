/* io.h: deadlines and writes on non-blocking sockets. Every socket in
 * corral-egress is non-blocking, so no peer can hold a thread past a deadline. */
#ifndef CORRAL_EGRESS_IO_H
#define CORRAL_EGRESS_IO_H

#include <stddef.h>
#include <stdint.h>

int64_t io_now_ms(void);
/* Milliseconds until deadline, at least 0, for poll(). */
int io_left_ms(int64_t deadline);
/* Writes all of buf before the deadline; 0 or -1. */
int io_write_all(int fd, const void *buf, size_t n, int64_t deadline);

#endif
