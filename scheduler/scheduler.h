/* scheduler.h: the rules every create passes through.
 *
 * scheduler_create() is the one entry point: the native API, the E2B surface
 * and redelivery after a worker dies all call it (redelivery through
 * scheduler_replace(), which reuses the same placement). Order matters:
 * admission (is this workspace under its limit?) then placement (which worker
 * may and can host it?), both before anything is provisioned. */
#ifndef CORRAL_SCHEDULER_H
#define CORRAL_SCHEDULER_H

#include "corral_conf.h"
#include "rconn.h"
#include "sched_error.h"
#include "tier.h"

#include <stdint.h>

#define SANDBOX_ID_MAX 33

struct sandbox_spec {
    char template_id[136]; /* a name, with an optional :tag (docs/templates.md) */
    long timeout_s;
    int timeout_given; /* 0: the workspace's sandbox_timeout_s applies (native creates) */
    double cpu_cores;
    long memory_mb;
    int has_require;      /* require_isolation was given */
    enum tier require;    /* meaningful when has_require */
    char *metadata_json;  /* JSON object text, owned */
    char *env_json;       /* JSON object text, owned */
    char *allowed_json;   /* JSON array text, owned: the native allowed_domains as given */
    char *egress_json;    /* the egress policy {"allow","deny"} as JSON text, owned; NULL: none */
    int egress_policy;    /* egress_json is set: placement needs an egress-capable worker */
    int internet;         /* E2B allow_internet_access: 1, 0, or -1 not given */
    int secure;           /* E2B "secure": envd calls need the envd access token */
    int public_traffic;   /* 0: data-plane calls need the traffic access token */
    char mask_host[201];  /* E2B maskRequestHost ("${PORT}" unexpanded), "" none */
    int pause_on_timeout; /* the deadline pauses it rather than killing it */
    /* Created from a snapshot (snapshot_resolve): its image, the template its
     * worker knows it by, and the worker that holds it; "" otherwise. */
    char image[256], base_template[65], pin_pool[33], pin_worker[33];
    /* From a template of the workspace (template_resolve): its start and
     * ready commands as JSON text, owned; NULL none. A build sandbox: its
     * build id and the command's build section (JSON text, owned). */
    char *start_json, *build_json;
    char build_id[32];
    char *mounts_json;  /* the create's volume mounts [{name, path}] as JSON text, owned; or NULL */
    char *volumes_json; /* the same resolved [{volume, path}] (volume_resolve), owned; or NULL */
    int auto_resume;    /* paused: gateway traffic resumes it */
    int keep_memory;    /* the deadline's pause keeps its memory (0: only its files) */
};

void sandbox_spec_free(struct sandbox_spec *s);

struct sched_conf {
    int create_timeout_ms;   /* how long a create may take to reach "running" */
    int grace_ms;            /* slack before corral-sched reclaims an abandoned create */
    int fleet_share;         /* % of the unscoped fleet's slots one workspace may hold */
    const char *env_secret;  /* the server secret: seals env vars (common/env_seal.h) */
    long long paused_max_ms; /* a paused sandbox is killed after this long */
    long template_ready_s;   /* corral.conf's, 0 when not set (decision 0080) */
    /* corral.conf's ceilings (decision 0063): a create never gets more,
     * whatever its workspace stored; [WS_LIMIT_TIMEOUT] is sandbox_max_timeout_s,
     * the longest any sandbox lives in one go. */
    long ceilings[WS_LIMIT_COUNT];
};

/* The scheduler's settings from corral.conf (corral-api and corral-sched alike). */
void sched_conf_init(struct sched_conf *sc, const struct corral_conf *c);

/* Admits, places, records and enqueues a create. On success 0 and sbid set:
 * the sandbox is "pending" until its worker reports it running. Its request,
 * refusal or placement is recorded in the audit trail by actor (audit.h). */
int scheduler_create(struct rconn *rc, const struct sched_conf *c, const char *ws,
                     const char *actor, const struct sandbox_spec *spec, char sbid[SANDBOX_ID_MAX],
                     struct sched_error *err);

/* Places a pending sandbox again, away from worker dead_wid (redelivery). */
int scheduler_replace(struct rconn *rc, const struct sched_conf *c, const char *ws,
                      const char *sbid, const char *dead_wid, struct sched_error *err);

#endif
