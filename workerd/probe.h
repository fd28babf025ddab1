/* probe.h: which runtimes dockerd offers, each with a tier workerd verified.
 *
 * runc is CONTAINER (the host kernel, namespaces and cgroups). runsc is GVISOR
 * only after a probe container run under it shows a gVisor guest: a kernel
 * that is not the host's, and a dmesg that gVisor wrote. A runsc that does not
 * pass, and any runtime we cannot vouch for, is UNKNOWN, which satisfies no
 * require_isolation. */
#ifndef WORKERD_PROBE_H
#define WORKERD_PROBE_H

#include "docker_api.h"
#include "tier.h"
#include "worker_conf.h"

#define PROBE_MAX_RUNTIMES 16

struct runtime {
    char name[64];
    enum tier tier;
};

/* GET /info, then probes. 0 with *n runtimes, or -1 (dockerd unreachable). */
int probe_runtimes(struct docker *d, const struct worker_conf *c, struct runtime *out, int *n,
                   char *err, size_t errlen);

/* 1 when the probe's output shows a gVisor guest rather than host_release. */
int probe_output_is_gvisor(const char *output, const char *host_release);

#endif
