/* log.h: one-line logs to stderr with a timestamp and a level.
 * Never pass secrets here: tokens are logged by id only. */
#ifndef CORRAL_LOG_H
#define CORRAL_LOG_H

void log_set_name(const char *name);
void log_msg(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_info(...) log_msg("info", __VA_ARGS__)
#define log_warn(...) log_msg("warn", __VA_ARGS__)
#define log_err(...) log_msg("error", __VA_ARGS__)

#endif
