/* start_ready.h: a template's start and ready commands (docs/templates.md):
 * once envd answers, the start command runs detached in the sandbox, and the
 * sandbox counts as running only once its ready command exits 0 (tried every
 * 250 ms) or, without one, once the start command still runs (or ended well)
 * a second after it began. */
#ifndef WORKERD_START_READY_H
#define WORKERD_START_READY_H

#include "docker_api.h"

#define START_TIMEOUT_S_DEFAULT 60
#define START_READY_EVERY_MS 250
#define START_ALIVE_MS 1000

/* Applies the create's "start" object (may be NULL: nothing to do) to
 * container ctr. fresh 0 (a create delivered again, its container running
 * already): the start command ran then, only readiness is waited for.
 * 0 ready; 1 not (reason says why, with the ready command's last output);
 * -1 dockerd did not answer. */
int start_ready_run(struct docker *d, const char *ctr, json_t *start, int fresh, char *reason,
                    size_t len);

#endif
