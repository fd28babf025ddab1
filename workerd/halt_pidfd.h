/* halt_pidfd.h: a running container's processes killed through the kernel.
 *
 * Under churn on 2 cores dockerd took up to 2 s to call a SIGKILLed
 * container stopped: it releases its network and mounts first, behind the
 * other containers' work. The kernel has every process of a pid namespace
 * dead before the namespace's init is reported exited, so a pidfd of that
 * init says "nothing of it runs" in milliseconds (issue 34: a kill p99 under
 * 2 s). dockerd still does the rest (the removal follows, as before). */
#ifndef WORKERD_HALT_PIDFD_H
#define WORKERD_HALT_PIDFD_H

/* 1 when an NSpid line (as /proc/self/fdinfo of a pidfd shows it, or
 * /proc/PID/status) names the init of a pid namespace below ours. */
int halt_is_ns_init(const char *nspid_line);

/* SIGKILLs pid and waits up to timeout_ms for it to be gone, but only when
 * it is the init of a pid namespace of its own and in the cgroup of the
 * container full_id (its 64-character id): a pid reused, a workerd in
 * another pid namespace than dockerd's, a runtime whose pid is not the
 * container's init all fall back to dockerd. 0 gone; -1 not done here. */
int halt_pidfd(long pid, const char *full_id, int timeout_ms);

#endif
