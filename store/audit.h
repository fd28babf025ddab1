/* audit.h: the audit trail, one Redis Stream per workspace (decision 0045).
 *
 * Every state change of a sandbox, every credential minted or revoked and
 * every worker joined or removed is appended by the code that claimed the
 * change (the one caller a transition's script let through), so each change
 * is recorded once. Workers of the unscoped fleet belong to no workspace:
 * their events go to the operator's stream, the workspace "" ({ws:}).
 *
 * Fields never hold a secret: credentials appear by id only, reasons are the
 * words of an error, never a request body or an env var. */
#ifndef CORRAL_AUDIT_H
#define CORRAL_AUDIT_H

#include "rconn.h"

#include <stddef.h>

/* Who caused an event: "key:<id>" (an API key), "worker:<id>", or one of: */
#define AUDIT_ACTOR_SCHEDULER "scheduler" /* corral-sched, or the rules themselves */
#define AUDIT_ACTOR_OPERATOR "operator"   /* corralctl */
#define AUDIT_ACTOR_GATEWAY "gateway"     /* traffic that resumed an autoResume sandbox */
#define AUDIT_ACTOR_MAX 48
#define AUDIT_ID_MAX 48 /* a stream id "<ms>-<seq>" and its NUL */

/* The event names in use; a new transition (paused, resumed, snapshotted)
 * adds its own with one audit_sandbox() call where it is claimed. */
#define AUDIT_REQUESTED "requested"
#define AUDIT_REFUSED "refused" /* by admission or placement; reason says which */
#define AUDIT_PLACED "placed"
#define AUDIT_RUNNING "running"
#define AUDIT_EXITED "exited"
#define AUDIT_FAILED "failed"
#define AUDIT_KILLED "killed"
#define AUDIT_TIMED_OUT "timed_out"
#define AUDIT_ABANDONED "abandoned"
#define AUDIT_LOST "lost"
#define AUDIT_PAUSE_REQUESTED "pause_requested" /* by a key, or by its deadline */
#define AUDIT_PAUSED "paused"                   /* its worker froze it */
#define AUDIT_RESUME_REQUESTED "resume_requested"
#define AUDIT_RESUMED "resumed"
#define AUDIT_SNAPSHOT_REQUESTED "snapshot_requested" /* reason: the snapshot's id */
#define AUDIT_SNAPSHOTTED "snapshotted"               /* its worker committed it */
#define AUDIT_SNAPSHOT_REMOVED "snapshot_removed"
#define AUDIT_VOLUME_CREATED "volume_created" /* reason: the volume's id */
#define AUDIT_VOLUME_REMOVED "volume_removed"
#define AUDIT_KEY_MINTED "key_minted"
#define AUDIT_KEY_REVOKED "key_revoked"
#define AUDIT_JOIN_TOKEN_MINTED "join_token_minted"
#define AUDIT_JOIN_TOKEN_REVOKED "join_token_revoked"
#define AUDIT_WORKER_JOINED "worker_joined"
#define AUDIT_WORKER_REJOINED "worker_rejoined" /* a dead worker handshook again */
#define AUDIT_WORKER_REMOVED "worker_removed"
#define AUDIT_WORKER_DEAD "worker_dead"
#define AUDIT_GATE_ALLOWED "gate_allowed" /* an agent's permission gate (decision 0054) */
#define AUDIT_GATE_DENIED "gate_denied"
#define AUDIT_NETWORK_UPDATED "network_updated" /* reason: applied now, or at next start */

/* One event. NULL or "" fields are left out of the entry. */
struct audit_event {
    const char *event;
    const char *actor;
    const char *sandbox;
    const char *worker;
    const char *tier;
    const char *credential; /* a key's or join token's id, never its secret */
    const char *reason;
};

/* How long events are kept (corral.conf audit_retention_s). Process-wide,
 * set once at start before any thread appends (sched_conf_init). */
void audit_set_retention(long seconds);
long audit_retention_ms(void);

/* Appends e to ws's stream ("" the operator's), trimming what is older than
 * the retention in the same command. 0, or -1 (logged: a lost event must not
 * fail the change it records). */
int audit_append(struct rconn *rc, const char *ws, const struct audit_event *e);

/* The same for a sandbox event: worker and tier come from its record when
 * it has one (read first: call it before a transition that deletes it). */
int audit_sandbox(struct rconn *rc, const char *ws, const char *sbid, const char *event,
                  const char *actor, const char *reason);
/* The same for e about e->sandbox, keeping e's worker (and tier) when the
 * sandbox has no record any more (a snapshot that outlives it). */
int audit_sandbox_event(struct rconn *rc, const char *ws, struct audit_event *e);

/* "key:<id>" / "worker:<id>" into out (AUDIT_ACTOR_MAX bytes). */
void audit_actor_key(char *out, const char *key_id);
void audit_actor_worker(char *out, const char *wid);

/* Drops ws's events older than the retention (corral-sched, for streams no
 * event has been appended to lately). 0 or -1. */
int audit_trim(struct rconn *rc, const char *ws);

/* A page request. Empty strings filter nothing; since/until are ms (0: open);
 * after is the cursor (the last id of the previous page, "" from the start). */
struct audit_query {
    char sandbox[33];
    char event[33];
    char actor[AUDIT_ACTOR_MAX];
    long long since_ms, until_ms;
    int limit;
    char after[AUDIT_ID_MAX];
};

/* One event read back: pointers into the page's reply. */
struct audit_entry {
    const char *id;
    long long time_ms;
    const char *event, *actor, *sandbox, *worker, *tier, *credential, *reason; /* "" absent */
};

struct audit_page {
    size_t n;
    struct audit_entry *v;
    char next[AUDIT_ID_MAX]; /* "" when the range is exhausted */
    redisReply *owned;
};

/* The oldest events of ws matching q, at most q->limit, in stream order, in
 * one round trip; at most AUDIT_SCAN_MAX entries are examined per page, so a
 * page may hold fewer than limit and still have a next. 0 or -1. */
#define AUDIT_SCAN_MAX 10000
int audit_read(struct rconn *rc, const char *ws, const struct audit_query *q,
               struct audit_page *out);
void audit_page_free(struct audit_page *p);

/* Parses a stream id "<ms>-<seq>": 0, or -1 when s is not one. Pure. */
int audit_id_parse(const char *s, unsigned long long *ms, unsigned long long *seq);

#endif
