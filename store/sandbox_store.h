/* sandbox_store.h: a sandbox's record in its workspace's slot, and its state
 * transitions. Each transition is one script, so two handlers (or a handler and
 * corral-sched) racing on the same sandbox cannot both win. */
#ifndef CORRAL_SANDBOX_STORE_H
#define CORRAL_SANDBOX_STORE_H

#include "id_list.h"
#include "rconn.h"
#include "sandbox_codec.h"

#include <jansson.h>
#include <stdint.h>

struct sandbox_record;

/* Writes a create's record (r->ws, r->id: its fields as sandbox_fields.c
 * spells them), pending until pending_deadline. 0 or -1. */
int sandbox_insert(struct rconn *rc, const struct sandbox_record *r, int64_t pending_deadline);

/* Deletes the record and every index entry; *worker and *pool are filled from it.
 * 1 removed, 0 there was none, -1 Redis. */
int sandbox_remove(struct rconn *rc, const char *ws, const char *sbid, char worker[33],
                   char pool[33]);

/* Applies "wid says sbid is <state>": running, paused, exited, failed, or
 * missing (a full report that omits it: only a live sandbox is then marked
 * exited). *was_pending: a create, pause or resume waits on this change. */
enum report_outcome sandbox_report(struct rconn *rc, const char *ws, const char *sbid,
                                   const char *wid, enum sandbox_reported state, const char *reason,
                                   int *was_pending);

/* For a dead worker: ORPHAN_REPLACE (pending: place again), ORPHAN_LOST (was
 * live, now lost), or ORPHAN_SKIP (not on that worker any more), in *out.
 * 0, or -1 on Redis failure. */
int sandbox_orphan(struct rconn *rc, const char *ws, const char *sbid, const char *wid,
                   enum orphan_decision *out);

/* Moves a pending sandbox from old_wid to a new placement; 1 moved, 0 no longer
 * pending on old_wid, -1. egress_next is the record's egress_next as read
 * before placing ("" none): it becomes the sandbox's policy if still current. */
int sandbox_move(struct rconn *rc, const char *ws, const char *sbid, const char *old_wid,
                 const char *pool, const char *wid, const char *runtime, const char *tier,
                 const char *egress_next);

/* Records the egress policy (JSON text; NULL: no policy) a live sandbox gets at
 * its next start, leaving the running one alone. 1 recorded, 0 no such
 * sandbox, 2 it has ended, -1 Redis. */
int sandbox_set_egress_next(struct rconn *rc, const char *ws, const char *sbid, const char *policy);

/* Puts policy (JSON text, a policy) in force now, for its worker to apply:
 * only while the sandbox runs on worker with a policy in force (its proxy is
 * there). 1 done, 3 not so (record it for the next start instead), 0 no such
 * sandbox, -1 Redis. */
int sandbox_set_egress_live(struct rconn *rc, const char *ws, const char *sbid, const char *policy,
                            const char *worker);

/* Moves the kill deadline of a running sandbox (E2B setTimeout / connect);
 * only_extend keeps a later one. 1 set, 0 not running, -1 Redis. */
int sandbox_set_deadline(struct rconn *rc, const char *ws, const char *sbid, int64_t expires_ms,
                         int only_extend);

/* ---- Pause, resume and deadlines (sandbox_pause.c, decision 0044) ---- */

/* What a transition did: outcome TRANSITION_OK (or PAUSE/KILL/NOTDUE for a
 * deadline), ABSENT (no record), OVER_LIMIT (admission refused a resume, limit
 * set), NETWORK, or REFUSED by the state in refused; the worker and pool that
 * hold the sandbox when it is theirs to act on. */
struct sandbox_transition {
    enum transition_outcome outcome;
    enum sandbox_state refused;
    char worker[33], pool[33];
    long limit;
    /* A pause: whether it keeps the memory (decision 0074). A resume: 0 when
     * the sandbox starts afresh (paused without memory, or asked to). */
    int keep_memory;
    /* A resume: the egress policy recorded while paused, to apply ("null":
     * none), malloc'd, or NULL (no change); outcome NETWORK: "add" or
     * "remove", the change a resume keeping the memory cannot make. The
     * caller frees it. */
    char *egress;
};

/* running -> pausing: its admission place is given back and it is killed at
 * hold_until unless resumed; keep_memory 0: it keeps only its files (decision
 * 0074). 0 (t says how it went), -1 Redis. */
int sandbox_mark_pausing(struct rconn *rc, const char *ws, const char *sbid, long long hold_until,
                         int keep_memory, struct sandbox_transition *t);
/* paused -> resuming, taking an admission place until reserve_until (made
 * lasting when the worker reports it running); timeout_s >= 0 replaces its
 * timeout; fresh: start it afresh even if its memory was kept. The policy
 * recorded by PUT .../network becomes its own (t->egress). 0 (t says how it
 * went; free t->egress), -1 Redis. */
int sandbox_mark_resuming(struct rconn *rc, const char *ws, const char *sbid,
                          long long reserve_until, long ceiling, long timeout_s, int fresh,
                          struct sandbox_transition *t);
/* Claims a passed deadline: TRANSITION_PAUSE (marked pausing, until
 * hold_until), KILL, or NOTDUE (someone acted first). 0, -1 Redis. */
int sandbox_timeout_claim(struct rconn *rc, const char *ws, const char *sbid, long long hold_until,
                          struct sandbox_transition *t);

/* Wakes the handler waiting on a create with "running" or "failed:<reason>". */
int sandbox_wake(struct rconn *rc, const char *ws, const char *sbid, const char *msg);

/* The workspace a sandbox id belongs to, from the index the data plane keeps
 * (ids are global, records live in their workspace's slot). 1, 0 none, -1. */
int sandbox_workspace_of(struct rconn *rc, const char *sbid, char ws[33]);

/* ---- The record, typed (sandbox_record.c) ----
 * What a field stands for when a record lacks it (an older record, or one
 * written before the field existed): the one place these defaults live. The
 * create defaults of a spec (sandbox_spec_parse.c) are the same numbers. */
#define SANDBOX_DEFAULT_TEMPLATE "base"
#define SANDBOX_DEFAULT_TIMEOUT_S 300
#define SANDBOX_DEFAULT_CPU_CORES 1.0
#define SANDBOX_DEFAULT_MEMORY_MB 512
#define SANDBOX_DEFAULT_SECURE 0 /* before "secure" existed no sandbox had an envd token */
#define SANDBOX_DEFAULT_PUBLIC 1 /* data-plane traffic needs no token unless asked */

/* One sandbox, field by field as sandbox_fields.c reads and writes it. Text
 * fields are never NULL ("" when absent) except egress_next, and point into
 * storage the record (or its list) owns. */
struct sandbox_record {
    const char *id, *ws, *template_id, *pool, *worker, *runtime, *tier;
    enum sandbox_state state;
    const char *state_text;        /* the word read ("" absent): shown when state is UNKNOWN */
    const char *require_isolation; /* tier name, "" when none was required */
    const char *reason;            /* why it ended, "" while live */
    const char *metadata;          /* JSON object text */
    const char *allowed_domains;   /* JSON array text: the native allowed_domains */
    const char *env;               /* sealed env vars (or, in an older record, JSON) */
    const char *egress;            /* the policy in force as JSON text; "" none */
    const char *mask_host;         /* the Host its services are sent (${PORT}); "" none */
    const char *egress_next;       /* NULL: none recorded; "null": recorded as no policy */
    const char *image;             /* made from a snapshot: its image on the worker; "" */
    const char *base_template;     /* then: the template the snapshot came from; "" */
    const char *volumes;           /* mounted volumes [{volume, path}] as JSON text; "" none */
    const char *start;             /* a template's start/ready commands as JSON text; "" none */
    const char *build;             /* a build sandbox: its build id (docs/templates.md); "" */
    const char *build_spec;        /* then: the command's build section as JSON text */
    double cpu_cores;
    long memory_mb, timeout_s;
    long pids_limit, disk_mb;                     /* 0: not recorded (older record) */
    long long created_at, started_at, expires_at; /* ms since the epoch; 0: not (yet) */
    int secure, public_traffic, egress_policy;
    int internet;                      /* E2B allow_internet_access: 1, 0, or -1 not given */
    int pause_on_timeout, auto_resume; /* decision 0044; 0 in older records */
    int keep_memory;   /* the deadline's pause keeps the memory (decision 0074; 1 if absent) */
    int paused_memory; /* the latest pause kept it: frozen (1), or stopped (0) */
    redisReply *owned; /* what sandbox_record_free frees (NULL: nothing) */
};

/* Fills r with every default: the record of a sandbox whose hash is empty. */
void sandbox_record_defaults(struct sandbox_record *r);
/* Fills r from an HGETALL-shaped reply, which must outlive r (r->owned NULL);
 * sandbox_fields.c. */
void sandbox_record_fill(struct sandbox_record *r, const redisReply *hash);
/* Reads one record: 1 found, 0 absent, -1 Redis. Free with sandbox_record_free. */
int sandbox_read(struct rconn *rc, const char *ws, const char *sbid, struct sandbox_record *r);
void sandbox_record_free(struct sandbox_record *r);
int sandbox_is_running(const struct sandbox_record *r);
/* Paused or on the way there: the E2B surface calls both "paused". */
int sandbox_is_paused(const struct sandbox_record *r);
/* Not ended: running, pausing, paused or resuming (pending is not yet live). */
int sandbox_is_live(const struct sandbox_record *r);
/* The state's word as the API shows it: the table's, or for a word no table
 * names (UNKNOWN) the one the record holds ("" when it has none). */
const char *sandbox_state_shown(const struct sandbox_record *r);
/* A JSON field of a record (metadata, allowed_domains, a policy) parsed; the
 * parsed fallback when it does not parse. */
json_t *sandbox_json_field(const char *text, const char *fallback);

/* A workspace's sandboxes, read in one round trip. */
struct sandbox_list {
    size_t n;
    struct sandbox_record *items;
    redisReply *owned;
};

/* Every sandbox of ws, or only those in state (SANDBOX_STATE_ANY: all). 0,
 * or -1 (Redis, memory). Free with sandbox_list_free. */
int sandbox_list_read(struct rconn *rc, const char *ws, enum sandbox_state state,
                      struct sandbox_list *out);
void sandbox_list_free(struct sandbox_list *l);

/* ---- What a waiting create needs (sandbox_wait.c) ---- */

/* Idempotency-Key: the key is named by mac (the header's MAC, never the
 * header). Tries to claim it for claim_ms: 1 claimed, 0 already taken (sbid
 * and print filled from its value, or "" while its first create is still
 * being placed), -1 Redis. */
int sandbox_idem_claim(struct rconn *rc, const char *ws, const char *mac, int claim_ms,
                       char sbid[33], char print[65]);
/* Records the key's sandbox and body fingerprint for ttl_ms. 0 or -1. */
int sandbox_idem_record(struct rconn *rc, const char *ws, const char *mac, const char *sbid,
                        const char *print, long long ttl_ms);
void sandbox_idem_forget(struct rconn *rc, const char *ws, const char *mac);

/* The waiting handler's lease on its create (swept by corral-sched when it
 * lapses): take or renew until until_ms, give up. 0 or -1. */
int sandbox_wait_hold(struct rconn *rc, const char *ws, const char *sbid, long long until_ms);
void sandbox_wait_release(struct rconn *rc, const char *ws, const char *sbid);
/* The lapsed lease of a waiter taken by the one sweep that will act on it:
 * 1 taken here, 0 another took it, -1 Redis. */
int sandbox_wait_take(struct rconn *rc, const char *ws, const char *sbid);

/* The deadlines corral-sched sweeps: a create's (pending), its waiting
 * handler's lease, a sandbox's timeout. */
enum sandbox_due { SANDBOX_DUE_CREATE, SANDBOX_DUE_WAITER, SANDBOX_DUE_TIMEOUT };
/* Up to 100 sandboxes of ws whose `which` deadline has passed. 0, or -1. */
int sandbox_due(struct rconn *rc, const char *ws, enum sandbox_due which, struct id_list *out);

/* Whether sbid's record still names worker wid: 1 yes, 0 no (gone, or
 * moved), -1 Redis. */
int sandbox_worker_is(struct rconn *rc, const char *ws, const char *sbid, const char *wid);

/* Blocks up to block_ms for sandbox_wake's message ("running" or
 * "failed:<reason>"), copied into msg. 1 woken, 0 nothing came, -1 Redis. */
int sandbox_wait_wake(struct rconn *rc, const char *ws, const char *sbid, int block_ms, char *msg,
                      size_t msglen);

#endif
