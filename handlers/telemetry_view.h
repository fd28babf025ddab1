/* telemetry_view.h: a sandbox's metrics and log lines, in and out (pure).
 *
 * In: a worker's sample or log line (POST /v1/worker/telemetry) checked and
 * rebuilt as the canonical JSON text store/telemetry.h stores; nothing a
 * worker sent is stored as it came. Out: stored text rendered as E2B's
 * SandboxMetric, SandboxLog and SandboxLogEntry, and the native sample. */
#ifndef CORRAL_TELEMETRY_VIEW_H
#define CORRAL_TELEMETRY_VIEW_H

#include <jansson.h>
#include <stddef.h>

#define TELEMETRY_LINE_MAX 2048     /* bytes of one log line kept */
#define TELEMETRY_SKEW_MS 300000LL  /* how far ahead of our clock a worker's time may be */
#define TELEMETRY_PAST_MS 3600000LL /* how old a pushed sample or line may be */

/* A worker's sample {ts_ms, cpu_count, cpu_used_pct, mem_used, mem_total,
 * mem_cache, disk_used, disk_total} as stored text (malloc'ed), *ts_ms its
 * time; NULL with err naming the field. */
char *telemetry_metric_in(const json_t *m, long long now_ms, long long *ts_ms, char *err,
                          size_t errlen);
/* A worker's log line {ts_ns, line} as stored text (malloc'ed); a longer line
 * is cut at TELEMETRY_LINE_MAX on a UTF-8 boundary. NULL with err, which
 * follows the line's own path (".line: must be a string"). */
char *telemetry_log_in(const json_t *l, long long now_ms, long long *ts_ms, char *err,
                       size_t errlen);

/* Stored text out; NULL when it does not parse (skipped by the caller). */
json_t *telemetry_metric_e2b(const char *stored);
json_t *telemetry_metric_native(const char *stored);
json_t *telemetry_log_line(const char *stored);
/* A line written as a JSON object (envd's lifecycle lines) gives its level,
 * message and other keys as fields; any other line is info, all message. */
json_t *telemetry_log_entry(const char *stored);

/* debug 0, info 1, warn 2, error 3; -1 for anything else. */
int telemetry_level_rank(const char *level);

#endif
