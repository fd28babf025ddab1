/* sandbox_codec.h: the closed sets of words a sandbox's record and its
 * scripts speak, as enums. Each is decoded once, where a reply or a request
 * names it, through one table (sandbox_codec.c) that also gives its wire word
 * back: the Redis value and the API's JSON value are the table's, unchanged. */
#ifndef CORRAL_SANDBOX_CODEC_H
#define CORRAL_SANDBOX_CODEC_H

/* The record's "state". UNKNOWN (0, the default) stands for an absent or
 * unexpected word; the record keeps that word to show it as it was. */
enum sandbox_state {
    SANDBOX_STATE_UNKNOWN = 0,
    SANDBOX_STATE_PENDING,
    SANDBOX_STATE_RUNNING,
    SANDBOX_STATE_PAUSING,
    SANDBOX_STATE_PAUSED,
    SANDBOX_STATE_RESUMING,
    SANDBOX_STATE_EXITED,
    SANDBOX_STATE_ERROR,
    SANDBOX_STATE_LOST,
    SANDBOX_STATE_COUNT
};
/* A list filter that takes every state (sandbox_list_read). */
#define SANDBOX_STATE_ANY SANDBOX_STATE_UNKNOWN

/* The wire word ("" for UNKNOWN); the state a word names (UNKNOWN for NULL
 * or any other word). */
const char *sandbox_state_name(enum sandbox_state s);
enum sandbox_state sandbox_state_parse(const char *word);
/* Not ended: running, pausing, paused or resuming (pending is not yet live). */
int sandbox_state_is_live(enum sandbox_state s);

/* What a pause, resume or deadline script answered (sandbox_store.h's struct
 * sandbox_transition). REFUSED: the record's state refused it; the answer
 * was that state's word. */
enum transition_outcome {
    TRANSITION_OK = 0,
    TRANSITION_PAUSE,      /* a deadline: marked pausing */
    TRANSITION_KILL,       /* a deadline: to be killed */
    TRANSITION_NOTDUE,     /* a deadline someone acted on first */
    TRANSITION_ABSENT,     /* no record */
    TRANSITION_NETWORK,    /* a resume keeping the memory cannot change the proxy */
    TRANSITION_OVER_LIMIT, /* admission refused a resume */
    TRANSITION_REFUSED,
    TRANSITION_COUNT
};
const char *transition_outcome_name(enum transition_outcome o); /* "" for REFUSED */
/* A script's first word: an outcome, else REFUSED with *refused the state it
 * names (UNKNOWN for a word that is neither). */
enum transition_outcome transition_outcome_parse(const char *word, enum sandbox_state *refused);

/* For a dead worker's sandbox: placed again, lost, or not that worker's. */
enum orphan_decision { ORPHAN_SKIP = 0, ORPHAN_REPLACE, ORPHAN_LOST, ORPHAN_COUNT };
const char *orphan_decision_name(enum orphan_decision d);
enum orphan_decision orphan_decision_parse(const char *word); /* SKIP for any other */

/* What a worker says of one of its sandboxes (a heartbeat's "state"), or
 * MISSING: a full report that omits it. */
enum sandbox_reported {
    SANDBOX_REPORTED_UNKNOWN = 0,
    SANDBOX_REPORTED_RUNNING,
    SANDBOX_REPORTED_PAUSED,
    SANDBOX_REPORTED_EXITED,
    SANDBOX_REPORTED_FAILED,
    SANDBOX_REPORTED_MISSING,
    SANDBOX_REPORTED_COUNT
};
const char *sandbox_reported_name(enum sandbox_reported r); /* "" for UNKNOWN */
enum sandbox_reported sandbox_reported_parse(const char *word);

/* Outcomes of a worker's report about a sandbox. */
enum report_outcome {
    REPORT_IGNORED = 0, /* nothing changed */
    REPORT_STARTED,     /* pending -> running: wake the waiting create */
    REPORT_STOPPED,     /* running/pending -> exited or error: release its resources */
    REPORT_KILL,        /* not this worker's (or its reservation lapsed): kill it */
    REPORT_PAUSED,      /* pausing -> paused: wake the waiting pause */
    REPORT_RESUMED,     /* resuming -> running: wake the waiting resume */
    REPORT_COUNT
};
const char *report_outcome_name(enum report_outcome o);
enum report_outcome report_outcome_parse(const char *word); /* IGNORED for any other */

/* The index of word in a table of n wire words indexed by an enum (only
 * non-empty entries match), or -1: for the other records' small tables
 * (snapshot_store.c, worker_store.c). */
int codec_word_index(const char *const *words, int n, const char *word);

#endif
