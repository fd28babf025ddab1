/* containers.h: sandboxes as Docker containers.
 *
 * A sandbox is one container named corral-<sandbox id>-<worker id> and
 * labelled corral.sandbox, corral.workspace, corral.worker, corral.tier and
 * corral.template. The worker id is part of the name so that two workerd on
 * one dockerd never collide, even when a sandbox of a dead worker is placed
 * again on its neighbour; every lookup filters on corral.worker, so a workerd
 * never touches a container of another worker id. Docker's unique names make
 * a create idempotent: a second create of the same sandbox meets 409. */
#ifndef WORKERD_CONTAINERS_H
#define WORKERD_CONTAINERS_H

#include "docker_api.h"
#include "layer_cache.h"
#include "state_file.h"
#include "states.h"
#include "worker_conf.h"

/* Every sandbox runs envd (the host file conf->envd_bin, bind-mounted
 * read-only at ENVD_MOUNT) as its entrypoint and PID 1, as root, on port
 * ENVD_PORT; a secure sandbox's access token reaches envd in ENVD_TOKEN_ENV. */
#define ENVD_MOUNT "/.corral/envd"
/* Changes to the environment envd applies at its start (envd -net-env): how a
 * stopped sandbox's proxy variables follow a new network (decision 0074). */
#define ENVD_NET_ENV_DIR "/.corral"
#define ENVD_NET_ENV_FILE "net.env"
#define ENVD_PORT 49983
#define ENVD_PORT_STR "49983"
#define ENVD_TOKEN_ENV "CORRAL_ENVD_ACCESS_TOKEN"

#define CTR_ID_MAX 65
#define CTR_REASON_MAX 256

/* Where a create's time went (ms), for its log line: its image and volumes
 * made ready, the look into the warm pool (and a claim: decision 0082), its
 * network (and proxy), dockerd's container create, its start, envd's first
 * answer. */
enum {
    CTR_PHASE_PREP,
    CTR_PHASE_CLAIM,
    CTR_PHASE_NET,
    CTR_PHASE_CREATE,
    CTR_PHASE_START,
    CTR_PHASE_ENVD,
    CTR_PHASES
};

struct ctr_state {
    char sbid[CTR_ID_MAX];
    enum sb_state state; /* what the heartbeat tells of it */
    char reason[CTR_REASON_MAX];
    char tier[16];
    long phase_ms[CTR_PHASES]; /* a create's only; 0 elsewhere */
    int claimed;               /* a create's: it took a warm sandbox */
};

/* What this worker can do for its sandboxes, found at start and kept checked:
 * netguard's rules in place (without them no sandbox is created), an egress
 * proxy available, and dockerd able to limit a container's writable layer. */
struct host_caps {
    int walled;
    int egress;
    int disk_quota;
};

/* 1 when s is safe in a container name, a label filter and a URL. */
int containers_id_ok(const char *s);

/* What names sandbox sbid's container on worker wid in dockerd's API: its
 * own name, corral-<sbid>-<wid>, or for a claimed warm sandbox its container
 * id (renamed after its claim: warm_index.h). */
void containers_name(char *out, size_t len, const char *sbid, const char *wid);

/* The name a sandbox's container has (or is given): corral-<sbid>-<wid>. */
void containers_own_name(char *out, size_t len, const char *sbid, const char *wid);

/* A running sandbox's IPv4 address, the one envd answers on and the data port
 * forwards to. 0 with ip set; -1 when it is absent, not running or without an
 * address, or dockerd did not answer within timeout_ms. */
int containers_ip(struct docker *d, const char *wid, const char *sbid, long timeout_ms, char *ip,
                  size_t len);

/* What a create needs besides its command, and what it tells back. */
struct ctr_extras {
    struct worker_identity id; /* in: for a registry image's pull token */
    struct layer_plan plan;    /* out: a build's starting point (plan.active) */
    int fresh;                 /* out: its container was made by this create */
};

/* Applies a create command's "sandbox" object. 0: applied, *st says how it
 * is now (a create of an existing sandbox is a no-op that reports it); a new
 * container is "running" only once envd answered /health, waited for at most
 * ready_ms (else "failed", and the container is removed), and, with a
 * "start" object, once its ready command succeeded (start_ready.h). An
 * "image" is a snapshot's (corral-snap:…) or a registry's, pulled when absent
 * (image_pull.h); with "build", the container starts from the longest cached
 * prefix of its steps (x->plan; layer_cache.h).
 * 1: refused for good (st->state "failed", st->reason why). -1: dockerd did
 * not answer; nothing to acknowledge, the command will come again. */
int containers_create(struct docker *d, const struct worker_conf *c, const struct host_caps *caps,
                      const char *wid, json_t *sandbox, long ready_ms, struct ctr_extras *x,
                      struct ctr_state *st);

/* SIGKILLs the sandbox's own container and waits until dockerd saw it stop:
 * from then on no process of the sandbox runs (its init died, and with it its
 * pid namespace; under runsc, the sentry). Nothing is removed. 0 stopped or
 * absent, -1 dockerd did not answer or refused (err). */
int containers_halt(struct docker *d, const char *wid, const char *sbid, char *err, size_t errlen);

/* Kills and removes the sandbox's containers (its proxy too) and networks.
 * A sandbox that is gone is killed already: 0. -1 when dockerd did not answer. */
int containers_kill(struct docker *d, const char *wid, const char *sbid, char *err, size_t errlen);
/* This worker's containers or networks (what: "containers/json" or "networks";
 * query: "" or ending in '&'), labelled with corral.role=role when role is
 * not NULL. NULL when dockerd failed. */
json_t *containers_list_own(struct docker *d, const char *what, const char *query, const char *wid,
                            const char *role);
/* 1 when dockerd refused to remove a sandbox's network since the last call
 * (a kill still succeeds without it: the network is swept, netsweep.h). */
int containers_networks_refused(void);

/* Removes the container called name (forced, with its anonymous volumes): 0
 * removed, absent or being removed; -1 refused or dockerd down (err). */
int containers_remove(struct docker *d, const char *name, char *err, size_t errlen);

/* One sandbox's container, inspected (the listing can lag a "die" event):
 * 0 with st ("running", "paused" when frozen or stopped by a pause without
 * memory (stopped.h), or "exited" with its reason), 1 absent, -1 dockerd did
 * not answer. */
int containers_state(struct docker *d, const char *wid, const char *sbid, struct ctr_state *st);

/* 1 when sbid's container runs (frozen or not), 0 when it exists stopped, 2
 * when absent, -1 when dockerd did not answer. */
int containers_running(struct docker *d, const char *wid, const char *sbid);

/* Seconds a stop waits for envd to end its processes before SIGKILL. */
#define CONTAINERS_STOP_GRACE_S 5

/* Stops sbid's container (frozen or not): its processes end, its memory is
 * freed, its files and networks stay. 0 stopped (or already), 1 absent, -1
 * dockerd did not answer or refused (err). */
int containers_stop(struct docker *d, const char *wid, const char *sbid, char *err, size_t errlen);

/* Starts sbid's stopped container again: envd, its entrypoint, boots it
 * fresh from its files. As a create's: "running" (st) only once envd answered
 * /health within ready_ms; else "failed" and the sandbox removed (1). -1
 * dockerd did not answer. */
int containers_boot(struct docker *d, const char *wid, const char *sbid, long ready_ms,
                    struct ctr_state *st);

/* The container exists (name): brought to what a create asks for (started,
 * envd answering within ready_ms), or reported. 0 (st), 1 failed and
 * removed, -1 dockerd did not answer. */
int containers_settle(struct docker *d, const char *wid, const char *name, long ready_ms,
                      struct ctr_state *st);

/* The sandbox a listed container is (labels; name as dockerd lists it,
 * "/corral-<id>-<wid>"): its corral.sandbox label, or for a warm one
 * (corral.role=warm, decision 0082) the sandbox that claimed it, from its
 * name once renamed or from warm_index.h before (in buf); NULL for a warm
 * one not claimed, which is nobody's. */
const char *containers_sbid_of(json_t *labels, const char *name, const char *wid, char *buf,
                               size_t len);

/* Every container labelled with worker id wid, as states (exited ones with
 * their exit code or OOMKilled). Containers created but never started are left
 * out: their create was not acknowledged and will come again. *n entries in a
 * malloc'ed array; -1 when dockerd did not answer. */
int containers_list(struct docker *d, const char *wid, struct ctr_state **out, int *n, char *err,
                    size_t errlen);

#endif
