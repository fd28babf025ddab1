/* log_format.h: one log line as a JSON object (pure; tests/unit/unit_log.c).
 * Every string is escaped here, whatever its source: messages quote client
 * input, which may hold quotes, control characters or bytes that are not UTF-8. */
#ifndef CORRAL_LOG_FORMAT_H
#define CORRAL_LOG_FORMAT_H

#include <stddef.h>
#include <time.h>

/* The context fields a line may carry, in the order they are written. */
enum log_field { LOG_REQUEST_ID, LOG_WORKSPACE, LOG_SANDBOX, LOG_WORKER, LOG_TIER, LOG_NFIELDS };

extern const char *const log_field_names[LOG_NFIELDS];

struct log_line {
    struct timespec when; /* CLOCK_REALTIME */
    const char *level;
    const char *service;
    int pid;
    const char *fields[LOG_NFIELDS]; /* NULL or "": left out of the line */
    const char *msg;
};

/* Escapes in as the inside of a JSON string into out (cap bytes, NUL ended).
 * A byte that does not start valid UTF-8 becomes U+FFFD. Stops before an
 * escape that would not fit, never cutting one. Returns the length written. */
size_t log_json_escape(char *out, size_t cap, const char *in);

/* Writes the line, ending in "}\n", into out (cap bytes, at least
 * LOG_LINE_MIN). A message too long for cap is cut, the line stays valid JSON.
 * Returns the length written. */
#define LOG_LINE_MIN 512
size_t log_format(char *out, size_t cap, const struct log_line *l);

#endif
