/* lifecycle_log.h: the lines envd writes to its stdout, the container's log,
 * when it starts and when each process starts and ends: one JSON object a
 * line, which the control plane shows as the sandbox's logs (decision 0047).
 * They name a process by pid and its command's base name only: its
 * arguments and environment may hold secrets. */
#ifndef ENVD_LIFECYCLE_LOG_H
#define ENVD_LIFECYCLE_LOG_H

#include <jansson.h>
#include <sys/types.h>

void lifecycle_envd_started(const char *addr, int port);
/* config: the process's config ({cmd, args, envs, cwd}). */
void lifecycle_process_started(pid_t pid, const json_t *config, const char *user);
/* status: how it ended, as the end event says it ("exit status 0"). */
void lifecycle_process_ended(pid_t pid, const json_t *config, int ok, const char *status);

/* The base name of a command, cut to fit out (pure). */
void lifecycle_cmd_name(const char *cmd, char *out, size_t outlen);

#endif
