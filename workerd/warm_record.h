/* warm_record.h: a claimed warm sandbox, made and kept (decision 0082).
 *
 * <state_dir>/warm/<sandbox id> (0600) holds {"warm": its warm id, "ctr": its
 * container's id, "secret": envd's init secret, "init": what envd was told}:
 * enough to find its container and network and to tell envd again after its
 * container restarted. Written before envd is told, so a crash leaves a
 * record and never a claimed container without one. warm_pool.h is the interface the
 * rest of workerd uses. */
#ifndef WORKERD_WARM_RECORD_H
#define WORKERD_WARM_RECORD_H

#include "containers.h"
#include "docker_api.h"

#include <jansson.h>

#define WARM_SECRET_ENV "CORRAL_ENVD_INIT_TOKEN"

/* <state_dir>/warm, made 0700 if missing. 0, or -1 with err. */
int warm_record_init(const char *state_dir, char *err, size_t errlen);

/* A warm sandbox handed to a claim: its id, its container's id, envd's init
 * secret, envd's address (found when it was pooled: a rename keeps it), and
 * whether it was made with the limits the claim asks for already (no update
 * then). */
struct warm_claim {
    const char *id;
    const char *ctr;
    const char *secret;
    const char *ip;
    int limits_set;
};

/* Binds warm sandbox c to create sb: record, index (warm_index.h), limits,
 * envd's init; the rename comes after (warm_record_rename). 0 (st running),
 * 1 failed and undone (the next may be tried), -1 dockerd down. */
int warm_record_bind(struct docker *d, const char *wid, json_t *sb, const struct warm_claim *c,
                     struct ctr_state *st);

/* Claimed sandbox sbid's container given its sandbox's name, for people and
 * tools that read names (workerd finds it by id). 0 (also when it is gone or
 * was no claim), -1 dockerd down. */
int warm_record_rename(struct docker *d, const char *wid, const char *sbid);

/* envd told again from sbid's record (0 too when it has none); -1 failed. */
int warm_record_reinit(struct docker *d, const char *wid, const char *sbid);

/* The env vars sbid's envd was told at its claim, appended to arr as
 * "K=V" (a snapshot keeps them, as a cold sandbox's container does); none
 * when it was not claimed. */
void warm_record_env_append(const char *sbid, json_t *arr);

/* sbid's warm container and network, then its record. 0 (none too), -1. */
int warm_record_forget(struct docker *d, const char *wid, const char *sbid);

/* At start: warm sandboxes never claimed (their secrets died with the last
 * run) removed, and records whose sandbox is gone. */
void warm_record_sweep(struct docker *d, const char *wid);

#endif
