/* sched_error.h: the refusal a scheduler call hands back, which the handler
 * turns into {"code": status, "message": message}. Its own header so that
 * placement, snapshots and volumes report errors without depending on
 * scheduler.h (which depends on them). */
#ifndef CORRAL_SCHED_ERROR_H
#define CORRAL_SCHED_ERROR_H

struct sched_error {
    int status;
    char message[256];
};

void sched_error_set(struct sched_error *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
