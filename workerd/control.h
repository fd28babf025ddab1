/* control.h: the HTTPS client of the control channel (nginx -> corral-api).
 *
 * libcurl, trusting only the configured CA. The join token and the worker
 * secret go in headers, never in a URL, a log line or argv. A long-poll can be
 * cut short through *wake: workerd does that when one of its containers dies,
 * so that the death is reported at once rather than after the poll interval. */
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
    atomic_int *wake; /* non-zero: abort the transfer in flight */
    int timed_out;    /* the last control_post ran out of time */
};

#define CONTROL_ERR -1   /* network or TLS failure: retry with backoff */
#define CONTROL_WOKEN -2 /* cut short through *wake */

int control_init(struct control *ctl, const struct worker_conf *conf, atomic_int *wake);
void control_close(struct control *ctl);

/* POST path with a JSON body. id (may be NULL) adds X-Worker-Id/-Secret;
 * wakeable lets *wake cut it short. 0 with *status and *out (parsed JSON or
 * NULL), or CONTROL_ERR/CONTROL_WOKEN. */
int control_post(struct control *ctl, const char *path, json_t *body,
                 const struct worker_identity *id, int wakeable, long timeout_ms, long *status,
                 json_t **out, char *err, size_t errlen);

#endif
