/* agent.h: -mode agent (decision 0054): a sandbox is an envd session on this
 * machine, started by workerd as the user running it (envd -agent), instead
 * of a container. No dockerd is needed.
 *
 * Each session's envd listens on a loopback address of its own
 * (127.77.x.y, port 49983): the data port connects to the port a request
 * names, so a session reached at its own address keeps envd's usual port and
 * the SDK's getHost(port) meaning, and one session's address never reaches
 * another's envd. Sessions end with workerd: killed at its stop, and any a
 * crashed workerd left are killed at the next start (their pids are kept in
 * <state_dir>/agent/). */
#ifndef WORKERD_AGENT_H
#define WORKERD_AGENT_H

#include "containers.h"
#include "worker_conf.h"

#include <jansson.h>
#include <pthread.h>
#include <sys/types.h>

#include "tier.h"

/* The runtime an agent worker reports (common/tier.h). */
#define AGENT_RUNTIME AGENT_RUNTIME_NAME

/* agent_conf.c: one agent key (mode, template, work_tree, permission_mode,
 * gate_dir, policy, os_sandbox, ask_timeout, expose_ports,
 * allow_public_traffic): 0, -1 with err, 1 not ours. */
int agent_conf_set(struct agent_conf *a, const char *key, const char *value, char *err,
                   size_t errlen);
/* 1 when the data port may connect to port of a session: envd's, or one
 * the person listed in expose_ports (decision 0062). */
int agent_port_exposed(const struct agent_conf *a, unsigned port);
/* Defaults (template "base", the current directory, $HOME/.corral-gate),
 * directories made absolute, the one template set. 0, or -1 with err. */
int agent_conf_finish(struct worker_conf *c, char *err, size_t errlen);

/* agent_spawn.c: envd started for sandbox sbid on ip:ENVD_PORT, in a process
 * group of its own, with the gate's flags; its access token and env vars in
 * its environment only. The pid, or -1 with err. */
pid_t agent_spawn(const struct worker_conf *c, json_t *sb, const char *sbid, const char *ip,
                  char *err, size_t errlen);
/* Kills envd pid and every process it started (they are its descendants:
 * envd is their subreaper), envd first stopped so it starts nothing more. */
void agent_kill_tree(pid_t pid);
/* 1 when pid is an envd started with -agent (a pid file may be stale). */
int agent_pid_is_envd(pid_t pid);

/* agent_sessions.c: the sessions of this workerd. Thread-safe. */
/* Kills what a previous run left (its pid files). 0, or -1 with err. */
int agent_sessions_init(const struct worker_conf *c, char *err, size_t errlen);
/* As containers_create: 0 applied (st says how), 1 refused for good. */
int agent_create(const struct worker_conf *c, json_t *sb, long ready_ms, struct ctr_state *st);
/* Ends a session (absent: done). 0. */
int agent_kill(const struct worker_conf *c, const char *sbid);
/* Every session as a state (an ended one "exited" with its status), as
 * containers_list. 0, or -1 out of memory. */
int agent_list(struct ctr_state **out, int *n);
/* Sessions that ended since last asked (reaped here), each once, as
 * "exited" states. 0, or -1 out of memory. */
int agent_take_ended(struct ctr_state **out, int *n);
/* The loopback address of a running session: 0, or -1. */
int agent_addr(const char *sbid, char *ip, size_t len);
/* At workerd's stop: every session ends. */
void agent_stop_all(const struct worker_conf *c);

struct worker;
/* agent_audit.c: the agent's side thread. Every second: the decisions
 * <gate_dir>/audit.jsonl gained, to the workspace's audit stream (POST
 * /v1/worker/audit), and the sessions that ended, to the control plane at
 * once (a report_only heartbeat, as deaths.c sends for containers). */
int agent_audit_start(struct worker *w, pthread_t *th);

#endif
