/* sandbox_sample.h: one sandbox's part of a telemetry push: a metrics sample
 * from its Engine API stats, and the log lines its container wrote since the
 * last push (decision 0047). Used by the metrics thread only. */
#ifndef WORKERD_SANDBOX_SAMPLE_H
#define WORKERD_SANDBOX_SAMPLE_H

#include "containers.h"
#include "docker_api.h"

#include <jansson.h>
#include <stddef.h>

#define SAMPLE_LINE_MAX 2048 /* bytes of a log line sent (the control plane keeps as many) */
#define SAMPLE_LINES_MAX 200 /* lines of one sandbox in one push */

/* What the thread remembers of a sandbox between samples. */
struct sample_state {
    char sbid[CTR_ID_MAX];
    int live;                      /* seen running in this round */
    long long prev_cpu_ns;         /* CPU time at the last reading */
    long long prev_at_ns;          /* when (monotonic); 0: no reading yet */
    long cpu_count;                /* from HostConfig.NanoCpus */
    long long disk_total;          /* the corral.disk_mb label, in bytes */
    long long disk_used;           /* SizeRw, the writable layer */
    long long disk_at_ms;          /* when disk_used was read (a walk of the layer) */
    long long log_ns, log_next_ns; /* newest line sent; newest in the push in flight */
};

/* {id, metric, logs} for the push, or NULL when there is nothing (the first
 * reading gives no CPU percentage, so no metric; dockerd did not answer).
 * *budget is the bytes of log lines the push may still carry: lines past it
 * wait for the next push. */
json_t *sample_sandbox(struct docker *d, const char *wid, struct sample_state *s, size_t *budget);

/* A log line as a JSON string: cut at SAMPLE_LINE_MAX bytes on a UTF-8
 * boundary, and bytes that are not UTF-8 replaced with '?'. */
json_t *sample_line_json(const char *text, size_t len);

#endif
