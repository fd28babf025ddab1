/* states.h: the closed sets of states workerd handles, each spelled as a
 * string only at its edge.
 *
 * A sandbox's state (enum sb_state) is what the heartbeat tells the control
 * plane: its wire names are the four h_heartbeat.c accepts. A container's
 * state (enum dk_state) is dockerd's word for it, decoded once where the
 * Engine API's JSON is read. Inside workerd only the enums are compared. */
#ifndef WORKERD_STATES_H
#define WORKERD_STATES_H

enum sb_state {
    SB_NONE, /* not set yet: "" on the wire, as the empty string it replaced */
    SB_RUNNING,
    SB_PAUSED,
    SB_EXITED, /* ran and stopped, or its container was removed */
    SB_FAILED, /* a create (or a fresh resume) that could not be done */
    SB_STATES  /* how many: not a state */
};

/* The wire name ("running", "paused", "exited", "failed"; "" for SB_NONE). */
const char *sb_state_name(enum sb_state s);
/* The state a wire name stands for; SB_NONE for NULL or any other string. */
enum sb_state sb_state_decode(const char *name);

/* dockerd's container states (State.Status of an inspect, State of a
 * listing entry). */
enum dk_state {
    DK_UNKNOWN, /* absent, or a word this worker does not know */
    DK_CREATED,
    DK_RUNNING,
    DK_PAUSED,
    DK_RESTARTING,
    DK_REMOVING,
    DK_EXITED,
    DK_DEAD,
    DK_STATES /* how many: not a state */
};

enum dk_state dk_state_decode(const char *name);
/* dockerd's word for s; NULL for DK_UNKNOWN. */
const char *dk_state_name(enum dk_state s);

#endif
