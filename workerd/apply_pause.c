/* apply_pause.c: a pause or resume command, of either kind.
 *
 * A pause keeps the sandbox's memory by default: its container is frozen
 * (freeze.c, decision 0044). A pause with args {"memory": false} keeps only
 * its files: the container is stopped (its processes end, its memory is
 * freed) after it is marked stopped on purpose (stopped.h), so that it is
 * told "paused", never "exited", here and after a restart (decision 0074).
 *
 * A resume thaws a frozen container, or starts a stopped one again, envd
 * booting it fresh, and reports it running once envd answers, as a create.
 * Its args may ask for a fresh start of a frozen one ({"memory": false}: it is
 * stopped first) and carry the egress policy recorded while it was paused
 * ({"egress": policy or null}), applied before it runs (egress_change.h). A
 * fresh start that fails gives the sandbox up, as a create that fails. */
#include "worker.h"

#include "dataplane.h"
#include "egress_change.h"
#include "log.h"
#include "stopped.h"

#include <stdio.h>
#include <string.h>

/* What became of sbid: recorded to be reported (with the tier it had). */
static int told(struct worker *w, struct ctr_state *st, const char *what)
{
    sbtable_tier(&w->table, st->sbid, st->tier, sizeof(st->tier));
    log_sandbox("info", st->sbid, st->tier, "%s -> %s%s%s", what, sb_state_name(st->state),
                st->reason[0] ? ": " : "", st->reason);
    return apply_record(w, st);
}

static void state_of(struct ctr_state *st, const char *sbid, enum sb_state state,
                     const char *reason)
{
    memset(st, 0, sizeof(*st));
    snprintf(st->sbid, sizeof(st->sbid), "%s", sbid);
    snprintf(st->tier, sizeof(st->tier), "UNKNOWN");
    st->state = state;
    snprintf(st->reason, sizeof(st->reason), "%s", reason);
}

/* Marked first, then stopped: whatever dockerd says of it from the stop on
 * (a "die" event, a listing), it is paused. 0, or -1 (comes again). */
static int stop(struct worker *w, struct docker *dk, const char *sbid, int *gone)
{
    char err[256];
    int rc;

    *gone = 0;
    if (stopped_mark(sbid, err, sizeof(err)) != 0) {
        log_sandbox("error", sbid, NULL, "%s", err);
        return -1;
    }
    dataplane_forget(sbid);
    rc = containers_stop(dk, w->id.worker_id, sbid, err, sizeof(err));
    if (rc < 0) {
        log_sandbox("warn", sbid, NULL, "%s", err);
        return -1;
    }
    if (rc == 1) {
        stopped_clear(sbid);
        *gone = 1;
    }
    return 0;
}

/* A pause without memory. */
static int pause_files(struct worker *w, struct docker *dk, const char *sbid)
{
    struct ctr_state st;
    int gone;

    if (stop(w, dk, sbid, &gone) != 0)
        return -1;
    state_of(&st, sbid, gone ? SB_EXITED : SB_PAUSED, gone ? "container removed" : "");
    return told(w, &st, "pause without memory");
}

/* The sandbox given up: removed, and reported failed with why. */
static int give_up(struct worker *w, struct docker *dk, const char *sbid, const char *why)
{
    struct ctr_state st;
    char err[256];

    if (containers_kill(dk, w->id.worker_id, sbid, err, sizeof(err)) != 0)
        log_sandbox("warn", sbid, NULL, "%s", err);
    state_of(&st, sbid, SB_FAILED, why);
    return told(w, &st, "resume");
}

/* The policy recorded while sbid was paused (egress NULL: none) applied to
 * its container, frozen or stopped (egress_change.h). -1 comes again; else
 * *ended says whether the sandbox was given up for it (the value returned is
 * then its report's). */
static int change_egress(struct worker *w, struct docker *dk, const char *sbid, json_t *egress,
                         int stopped, int *ended)
{
    char err[256];
    int rc;

    *ended = 0;
    if (!egress)
        return 0;
    rc = egress_change_apply(dk, w->conf, &w->caps, w->id.worker_id, sbid, egress, stopped, err,
                             sizeof(err));
    if (rc <= 0)
        return rc;
    *ended = 1;
    return give_up(w, dk, sbid, err);
}

/* A fresh start: a frozen container stopped first, the new policy applied
 * to the stopped one, then booted as a create's container is. */
static int resume_fresh(struct worker *w, struct docker *dk, const char *sbid, json_t *egress)
{
    struct ctr_state st;
    int rc, ended, gone = 0;

    if (!stopped_has(sbid)) {
        /* Only a frozen one is stopped: a running one is a resume delivered
         * again after it was done, a dead one is told as it is. */
        rc = containers_state(dk, w->id.worker_id, sbid, &st);
        if (rc < 0)
            return -1;
        if (rc == 0 && st.state != SB_PAUSED)
            return told(w, &st, "resume");
        if (rc == 0 && stop(w, dk, sbid, &gone) != 0)
            return -1;
        if (rc == 1 || gone) {
            state_of(&st, sbid, SB_EXITED, "container removed");
            return told(w, &st, "resume");
        }
    }
    rc = change_egress(w, dk, sbid, egress, 1, &ended);
    if (rc < 0 || ended)
        return rc;
    rc = containers_boot(dk, w->id.worker_id, sbid, apply_envd_wait_ms(w), &st);
    if (rc < 0)
        return -1;
    if (rc == 0)
        stopped_clear(sbid);
    dataplane_forget(sbid); /* a new address, maybe on a new network */
    return told(w, &st, "resume without memory");
}

/* A thaw, after the proxy took a new policy (a frozen sandbox keeps its
 * network: the control plane asks for no other change of one). */
static int resume_frozen(struct worker *w, struct docker *dk, const char *sbid, json_t *egress)
{
    int ended, rc = change_egress(w, dk, sbid, egress, 0, &ended);

    if (rc < 0 || ended)
        return rc;
    return apply_freeze(w, dk, sbid, 0);
}

int apply_pause_slow(const json_t *cmd)
{
    enum worker_cmd c = command_of(cmd);
    const char *sbid = json_string_value(json_object_get(cmd, "sandbox_id"));
    json_t *args = json_object_get(cmd, "args");

    if (c != CMD_PAUSE && c != CMD_RESUME)
        return 0;
    return json_is_false(json_object_get(args, "memory")) || json_object_get(args, "egress") ||
           (c == CMD_RESUME && stopped_has(sbid));
}

int apply_pause_command(struct worker *w, struct docker *dk, json_t *cmd)
{
    const char *sbid = json_string_value(json_object_get(cmd, "sandbox_id"));
    json_t *args = json_object_get(cmd, "args");
    int fresh = json_is_false(json_object_get(args, "memory"));
    int pause = command_of(cmd) == CMD_PAUSE;

    if (!sbid || !containers_id_ok(sbid))
        return 0;
    if (pause)
        return fresh ? pause_files(w, dk, sbid) : apply_freeze(w, dk, sbid, 1);
    if (fresh || stopped_has(sbid))
        return resume_fresh(w, dk, sbid, json_object_get(args, "egress"));
    return resume_frozen(w, dk, sbid, json_object_get(args, "egress"));
}
