/* egress_change.h: the egress policy recorded for a paused sandbox (PUT
 * /sandboxes/{id}/network), applied as it resumes, before it runs again
 * (decision 0074).
 *
 * A policy for a sandbox that has one: its proxy is made anew with the new
 * policy on the same network, whichever way it is resumed (its container
 * frozen or stopped). Adding a policy to a sandbox without one, or removing
 * it, changes the sandbox's network (sbnet.h) and the proxy variables of its
 * environment: only for a stopped container, which is moved to its new
 * network and given the variables through envd's -net-env file; its old
 * network (and proxy) removed. A frozen one keeps the network its processes
 * hold: refused (the control plane asks for that only of a fresh start). */
#ifndef WORKERD_EGRESS_CHANGE_H
#define WORKERD_EGRESS_CHANGE_H

#include "containers.h"
#include "docker_api.h"
#include "worker_conf.h"

#include <jansson.h>

/* Gives sandbox sbid the policy (a JSON object; JSON null: none), its
 * container frozen (stopped 0) or stopped (1). 0 applied; 1 refused (err
 * says why; the caller gives the sandbox up); -1 dockerd did not answer. */
int egress_change_apply(struct docker *d, const struct worker_conf *c, const struct host_caps *caps,
                        const char *wid, const char *sbid, json_t *policy, int stopped, char *err,
                        size_t errlen);

/* The CA of sbid's proxy (egress_ca.h) put into its container name, created
 * or stopped, at SANDBOX_EGRESS_CA: a file of its own layer, not a mount, so
 * nothing of the proxy's directory is tied to the container (decision 0091).
 * 0, 1 refused (err), -1 dockerd down. */
int egress_ca_put(struct docker *d, const struct worker_conf *c, const char *name, const char *sbid,
                  char *err, size_t errlen);

#endif
