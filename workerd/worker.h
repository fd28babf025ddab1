/* worker.h: the state one workerd process carries, shared by its parts.
 *
 * Four threads: the main thread runs the control channel (handshake,
 * heartbeat, applying commands, reconciling with dockerd); the lease thread
 * renews the lease when the main thread is held up (lease.c); the events thread
 * follows dockerd's event stream, reports deaths on a request of its own and
 * flags the main thread; the metrics thread samples the running sandboxes
 * and pushes their metrics and log lines on a request of its own. In agent
 * mode (agent.h) neither of the last two runs: one thread tails the gate's
 * audit instead. */
#ifndef WORKERD_WORKER_H
#define WORKERD_WORKER_H

#include "commands.h"
#include "control.h"
#include "docker_api.h"
#include "probe.h"
#include "sbtable.h"
#include "state_file.h"
#include "worker_conf.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

struct worker {
    const struct worker_conf *conf;
    struct docker dk; /* main thread's dockerd connection */
    struct control ctl;
    struct worker_identity id;
    char workspace[128];
    long poll_ms, lease_ms;
    struct runtime rts[PROBE_MAX_RUNTIMES];
    int n_rts;
    struct host_caps caps; /* written by the main thread only, before creates start */
    struct sbtable table;
    json_t *acks;             /* command ids applied, not yet carried by a successful heartbeat */
    json_t *backlog;          /* commands received but not yet applied (a batch ran out of time) */
    json_t *arrived;          /* brought by keepalives during a batch: joins the backlog after it */
    json_t *snap_reports;     /* what became of snapshots asked for, not yet told (decision 0048) */
    json_t *killed;           /* sandboxes whose kill is done, not yet told (decision 0073) */
    atomic_int killing;       /* kills under way: their containers still hold slots */
    atomic_int creating;      /* creates under way that took a slot (apply.c) */
    int need_full;            /* next heartbeat lists every sandbox ("full": true) */
    int resume;               /* next heartbeat is the first after a handshake */
    int docker_down;          /* last listing failed: our view of the containers is stale */
    atomic_int docker_back;   /* events thread -> main: dockerd came back, report all */
    int sweep_nets;           /* networks without a sandbox looked for (netsweep.h) */
    atomic_int snap_dangling; /* a deleted snapshot's image may wait for its last sandbox */
    _Atomic int64_t contact_ms; /* main thread -> lease thread: when it last spoke (lease.c) */
    _Atomic int64_t blocked_ms; /* main thread -> lease thread: in one dockerd call since, or 0 */
    pthread_mutex_t id_mu;      /* guards id.worker_id for the events thread */
    volatile sig_atomic_t *stop;
};

/* backoff.c: capped exponential with jitter. */
struct backoff {
    long base_ms, max_ms, cur_ms;
};
void backoff_init(struct backoff *b, long base_ms, long max_ms);
void backoff_reset(struct backoff *b);
/* The next delay: the current step halved plus a random half, then doubled. */
long backoff_next(struct backoff *b);
/* Sleeps ms in small steps; returns early (1) when *stop is set. */
int sleep_unless_stopped(long ms, volatile sig_atomic_t *stop);

/* enrol.c: handshake; persists the identity. 0, or -1 when stopped. */
int enrol(struct worker *w);

/* hostcaps.c: installs the network rules and finds what else the host can do
 * (0, or -1 when sandboxes cannot be walled off); the recheck puts vanished
 * rules back: before every heartbeat at most every few seconds, and (now = 1)
 * before every batch of creates, so that no sandbox starts unwalled. */
int hostcaps_init(struct worker *w, char *err, size_t errlen);
void hostcaps_recheck(struct worker *w, int now);

/* health.c: "" when this worker can take sandboxes, else what stops it
 * (dockerd unreachable, accept failing, file descriptors nearly exhausted). */
void health_problem(const struct worker *w, char *out, size_t len);

/* reconcile.c: lists our containers and updates the table. */
void reconcile(struct worker *w);

/* commands.c: applies one command (as commands_arrived decoded it) from
 * the command table. 0 applied (ack it), -1 not (comes again). An unknown
 * one is acknowledged without effect; in agent mode, one a session cannot
 * take is refused (acknowledged, said so). apply_command_on: on dk, with no
 * agent-mode check (the batch's creates, kills and slow pauses and resumes). */
int apply_command(struct worker *w, json_t *cmd);
int apply_command_on(struct worker *w, struct docker *dk, json_t *cmd);
/* Creates and kills on a given dockerd connection (one per thread). */
int apply_create(struct worker *w, struct docker *dk, json_t *sandbox);
int apply_kill(struct worker *w, struct docker *dk, const char *sbid);
int apply_freeze(struct worker *w, struct docker *dk, const char *sbid, int freeze);
/* apply_pause.c: a pause or resume command, frozen or stopped (decision 0074). */
int apply_pause_command(struct worker *w, struct docker *dk, json_t *cmd);
/* 1 when cmd is a pause or resume that stops or boots a container, or remakes
 * a proxy: seconds of work, applied on a thread of its own as a create is
 * (apply_batch_parallel), never on the main thread. */
int apply_pause_slow(const json_t *cmd);
/* What became of a sandbox, recorded to be reported; 0, -1 out of memory. */
int apply_record(struct worker *w, const struct ctr_state *st);
/* How long a create (or a fresh resume) waits for envd. */
long apply_envd_wait_ms(const struct worker *w);
int apply_snapshot(struct worker *w, struct docker *dk, const char *sbid, json_t *args);
int apply_image_remove(struct worker *w, struct docker *dk, json_t *args);
int apply_volume_remove(struct worker *w, struct docker *dk, json_t *args);
/* A live network update (egress_live.c): args {"egress": policy}. */
int apply_egress_update(struct worker *w, struct docker *dk, const char *sbid, json_t *args);
/* The slots backstop: 1 when sbid may be created (it exists, or a slot is
 * free counting the containers still being killed and being created). */
int apply_slot_free(struct worker *w, const char *sbid);
/* Takes sbid's slot for its create: 1 taken, 0 none free, -1 an unusable id
 * (nothing taken). apply_create_taken (or apply_slot_give, when the create
 * never runs) gives it back. apply_create takes its own. */
int apply_slot_take(struct worker *w, const char *sbid);
void apply_slot_give(struct worker *w, int took);
int apply_create_taken(struct worker *w, struct docker *dk, json_t *sandbox, int took);

/* apply_batch.c: up to APPLY_PARALLEL commands of one kind (create, kill, or a
 * slow pause or resume: apply_pause_slow), of distinct sandboxes, at the head
 * of cmds applied at once, each on its own thread and dockerd connection;
 * results[i] as apply_command's. Returns how many it took (0 when the head is
 * none of them). */
#define APPLY_PARALLEL 8
/* inflight.c: kills and creates started while a batch runs, not waited for.
 * Main thread only. inflight_start: 0 started, -1 no room or no thread (a
 * create's slot, taken by the caller, is then given back). */
int inflight_start(struct worker *w, json_t *cmd, int create, int took);
int inflight_holds(const char *sbid);
/* 1 while a command started is not yet collected. */
int inflight_busy(void);
/* 1 when one started is done and waits to be collected. */
int inflight_any_done(void);
/* Each command that ends signals cv (its end noted under mu), so that the
 * main thread waiting on them collects and reports it at once (issue 35: a
 * claimed warm sandbox's caller waited for the next 250 ms look, 136 ms
 * p50). Set before any start; the pair must outlive every command started. */
void inflight_wake_on(pthread_mutex_t *mu, pthread_cond_t *cv);
/* Acknowledges the commands done; the running sandboxes they created join
 * told. */
void inflight_collect(struct worker *w, json_t *told);
int apply_batch_parallel(struct worker *w, json_t *cmds, int results[APPLY_PARALLEL]);
/* The sandbox a command is about (a kill's sandbox_id, a create's sandbox.id). */
const char *apply_sbid_of(const json_t *cmd);
/* Pauses and resumes first, then kills, then creates: a caller waits on each
 * (a kill is answered once its container is gone: decision 0073), a pause or
 * resume costs dockerd a few ms, and a kill frees the slot a create may have
 * been placed in. A pause or resume never passes another command of its own
 * sandbox, a kill never passes a create of its own, a create never passes a
 * kill of its own; the rest keep their order. */
void apply_order(json_t *cmds);
/* 1 when cmd is of a kind apply_batch_parallel takes (create, kill). */
int apply_batchable(const json_t *cmd);
/* Appends to backlog each of cmds whose stream id is neither in backlog nor
 * in acks. The control plane hands a worker again every command it has held
 * unacknowledged for 10 s (so one lost answer loses nothing); during a long
 * batch those are commands still waiting or being applied here, and the same
 * create applied twice at once fights itself over its network. */
void backlog_merge(json_t *backlog, const json_t *acks, json_t *cmds);
/* The same for what a keepalive brings during a batch, into arrived: a
 * create brought again while the batch applies it would otherwise stand in
 * arrived before its sandbox's kill, and hold that kill back until the
 * batch and all that started early were done (8 s in the soak; issue 34). */
void arrived_merge(json_t *arrived, const json_t *backlog, const json_t *acks, json_t *cmds);

/* heartbeat.c: the loop, until *stop. */
void heartbeat_run(struct worker *w);
/* A heartbeat that only renews the lease (no acks, no reports, no wait), sent
 * while a batch is applied: a worker busy creating must not be taken for dead.
 * Commands it brings join the backlog. Main thread only. */
void heartbeat_keepalive(struct worker *w);
/* What the poller thread brought joins w->arrived (during a batch). */
void arrived_from_poller(struct worker *w);
/* One sandbox's state as a heartbeat reports it: {id, state, reason?}. */
json_t *heartbeat_report_of(const struct sb_entry *e);

/* deaths.c: reports at once, on its own request (ctl) and dockerd connection
 * (q), which of our sandboxes expected running have died: sbid only, or all
 * when sbid is NULL. Events thread only. */
void deaths_report(struct worker *w, struct docker *q, struct control *ctl, const char *sbid);
/* A report of sbs ([{id, state, reason}], taken) and of the sandboxes whose
 * kill is done (killed, ids, may be NULL; not taken) at once, on a report_only
 * heartbeat sent on ctl beside the long-poll: deaths, and the pauses and
 * resumes applied while a batch runs (apply_batch.c). sbid only names it in
 * the log (may be NULL). ctl must be the caller's own: the main thread's only
 * while it waits on a batch. 1 when the control plane took it (200). */
int report_post(struct worker *w, struct control *ctl, json_t *sbs, const json_t *killed,
                const char *sbid);
/* Tells at once, on a request of its own, that sbid's kill is done as far as
 * its caller is concerned (its processes are dead; decision 0073). The
 * heartbeat's `killed` list tells it again once the containers are removed:
 * a lost report costs only the caller's wait. Any thread. */
void report_killed_now(struct worker *w, const char *sbid);
/* Adds sbid's state to told when it is a running sandbox not yet told (a
 * create done while a batch runs: its caller waits for it). A failed one is
 * left to the long-poll, which drops it from the table once told. */
void report_add_running(struct worker *w, const char *sbid, json_t *told);

/* lease.c: the lease thread (decision 0076): renews the lease on a request
 * of its own whenever the main thread was not heard for a third of it. The
 * main thread notes each heartbeat it sends (lease_contact) and brackets its
 * own dockerd calls (lease_blocked 1, then 0). */
int lease_start(struct worker *w, pthread_t *th);
void lease_contact(struct worker *w);
void lease_blocked(struct worker *w, int on);

/* events.c: the events thread. */
int events_start(struct worker *w, pthread_t *th);

/* telemetry.c: the metrics thread: every metrics_interval_ms, each running
 * sandbox's stats and new log lines, pushed on POST /v1/worker/telemetry. */
int telemetry_start(struct worker *w, pthread_t *th);

#endif
