/* telemetry.h: a sandbox's metrics samples and log lines, as its worker
 * pushes them (POST /v1/worker/telemetry) and the API reads them back.
 *
 * Both are sorted sets in the sandbox's workspace slot, scored by time in ms,
 * each member a canonical JSON object the caller built. Bounded twice: the
 * newest TELEMETRY_*_MAX members are kept, and both keys expire
 * TELEMETRY_TTL_MS after the last write (a sandbox that ended stops being
 * sampled); deleting the sandbox deletes them (sandbox_remove). */
#ifndef CORRAL_TELEMETRY_H
#define CORRAL_TELEMETRY_H

#include "rconn.h"

#include <stddef.h>

#define TELEMETRY_METRICS_MAX 720 /* an hour at the default 5 s interval */
#define TELEMETRY_LOGS_MAX 1000
#define TELEMETRY_TTL_MS 3600000LL

/* One push for one sandbox: at most one sample (metric NULL: none) and n log
 * lines. Written by one script, so a reader sees all of it or none. 0 or -1. */
struct telemetry_push {
    long long metric_ms;
    const char *metric;
    size_t nlogs;
    const long long *log_ms;
    const char *const *logs;
};
int telemetry_write(struct rconn *rc, const char *ws, const char *sbid,
                    const struct telemetry_push *p);

/* Members read back, oldest first; items point into owned. */
struct telemetry_list {
    size_t n;
    const char **items;
    redisReply *owned;
};

/* Samples or log lines scored within [from_ms, to_ms]. 0, or -1 (Redis,
 * memory). Free with telemetry_list_free. */
int telemetry_metrics(struct rconn *rc, const char *ws, const char *sbid, long long from_ms,
                      long long to_ms, struct telemetry_list *out);
int telemetry_logs(struct rconn *rc, const char *ws, const char *sbid, long long from_ms,
                   long long to_ms, struct telemetry_list *out);
/* The newest sample only (n is 0 or 1). */
int telemetry_latest_metric(struct rconn *rc, const char *ws, const char *sbid,
                            struct telemetry_list *out);
void telemetry_list_free(struct telemetry_list *l);

/* The two key names of a sandbox, for sandbox_remove's script. */
void telemetry_keys(const char *ws, const char *sbid, char *metrics, char *logs, size_t len);

#endif
