/* stderr_capture.h: what a function writes to stderr, for the unit tests of
 * the log lines (tests/unit/unit_log.c, tests/workerd/unit_workerd.c). */
#ifndef CORRAL_STDERR_CAPTURE_H
#define CORRAL_STDERR_CAPTURE_H

/* Runs fn(arg) with stderr going to a pipe; returns what it wrote (at most
 * 16 KiB, NUL ended; the caller frees it), or NULL when no pipe could be made. */
char *stderr_capture(void (*fn)(void *), void *arg);

#endif
