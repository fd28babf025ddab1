/* build_thread.h: a build sandbox's steps, run on a detached thread of their
 * own once the sandbox is running (docs/templates.md), so that neither the
 * heartbeat nor the batch waits on them. The thread streams the build's log
 * to the control plane (POST /v1/worker/builds/{bid}, at most every 500 ms),
 * fetches COPY's files from it, commits a layer after each step, pushes the
 * result and reports it ready, or the failed step. A sandbox killed meanwhile
 * ends the thread quietly. */
#ifndef WORKERD_BUILD_THREAD_H
#define WORKERD_BUILD_THREAD_H

#include "layer_cache.h"
#include "worker.h"

#define BUILD_STEP_TIMEOUT_S_DEFAULT 600
#define BUILD_POST_EVERY_MS 500

/* Starts the build of create sb (its "build" object) on its running
 * container, from plan. fresh 0 (its container existed before this create):
 * nothing was started by this process, so unless a thread of this process
 * runs it, the build is reported failed. */
void build_thread_start(struct worker *w, json_t *sb, const struct layer_plan *plan, int fresh);

/* The sandbox is being killed: its build's thread, if any, ends quietly. */
void build_thread_cancel(const char *sbid);

#endif
