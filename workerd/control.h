/* control.h: the HTTPS client of the control channel (nginx -> corral-api).
 *
 * libcurl, trusting only the configured CA. The join token and the worker
 * secret go in headers, never in a URL, a log line or argv. A long-poll is
 * never abandoned early (docs/decisions/0016): it ends when the control plane
 * answers, or after its timeout; but a poll the control plane can no longer
 * let take a command (its identity is gone, or workerd stops) is cancelled
 * (decision 0084). */
#ifndef WORKERD_CONTROL_H
#define WORKERD_CONTROL_H

#include "state_file.h"
#include "worker_conf.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdatomic.h>

struct control {
    CURL *curl;
    const struct worker_conf *conf;
    atomic_int *cancel; /* may be NULL; set: the request in flight ends (within a second) */
};

#define CONTROL_ERR -1 /* network or TLS failure: retry with backoff */

/* How long past poll_ms a long-poll may take before we call it lost. */
#define CONTROL_POLL_SLACK_MS 15000L

int control_init(struct control *ctl, const struct worker_conf *conf);
void control_close(struct control *ctl);

/* POST path with a JSON body. id (may be NULL) adds X-Worker-Id/-Secret.
 * 0 with *status and *out (parsed JSON or NULL), or CONTROL_ERR. */
int control_post(struct control *ctl, const char *path, json_t *body,
                 const struct worker_identity *id, long timeout_ms, long *status, json_t **out,
                 char *err, size_t errlen);

/* GET path (as control_post's headers); the answer's bytes, at most max, in
 * *buf (malloc'ed, may be NULL when empty). 0 with *status, or CONTROL_ERR. */
int control_get(struct control *ctl, const char *path, const struct worker_identity *id,
                long timeout_ms, size_t max, long *status, char **buf, size_t *len, char *err,
                size_t errlen);

#endif
