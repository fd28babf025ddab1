/* log.h: one JSON object per line on stderr (decision 0046): time, level,
 * service, pid, the context fields that apply (request_id, workspace, sandbox,
 * worker, tier) and msg. Messages are printf-style; ids belong in the context,
 * not in the text. Never pass secrets here: tokens are logged by id only. */
#ifndef CORRAL_LOG_H
#define CORRAL_LOG_H

#include "log_format.h"

#include <stdarg.h>

void log_set_name(const char *name);

/* This thread's context: every line it logs carries the field until it is
 * set again or cleared (NULL or "" clears). corral-api sets it per request. */
void log_ctx_set(enum log_field f, const char *value);
void log_ctx_clear(void);

/* The process's context, under every thread's own (workerd's worker id). */
void log_ctx_set_process(enum log_field f, const char *value);

void log_msg(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(const char *level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* One line about one thing: the fields given (NULL: the thread's own) are
 * its context for this line only; the thread's context is as it was after. */
struct log_about {
    const char *workspace, *sandbox, *worker, *tier;
};
void log_about(const char *level, const struct log_about *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A line about one sandbox (workerd: its id and tier). */
#define log_sandbox(level, sbid, tier_name, ...)                                                   \
    log_about(level, &(struct log_about){.sandbox = (sbid), .tier = (tier_name)}, __VA_ARGS__)

#define log_info(...) log_msg("info", __VA_ARGS__)
#define log_warn(...) log_msg("warn", __VA_ARGS__)
#define log_err(...) log_msg("error", __VA_ARGS__)

#endif
