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
/* Reads exactly n bytes before the deadline; 0, or -1 (end, error, late). */
int io_read_exact(int fd, void *buf, size_t n, int64_t deadline);
/* Waits for `events` on fd until the deadline: 1 ready, 0 late, -1 error. */
int io_wait(int fd, short events, int64_t deadline);

#endif
