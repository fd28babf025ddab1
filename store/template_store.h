/* template_store.h: a workspace's templates and their builds (issue 28,
 * docs/templates.md), the one home of their records. */
#ifndef CORRAL_TEMPLATE_STORE_H
#define CORRAL_TEMPLATE_STORE_H

#include "rconn.h"

#include <jansson.h>
#include <stddef.h>

#define TEMPLATE_PREFIX "tpl-"
#define BUILD_PREFIX "bld-"
#define TEMPLATE_ID_MAX 32

enum build_state {
    BUILD_STATE_UNKNOWN = 0,
    BUILD_STATE_WAITING, /* created, its steps not yet sent */
    BUILD_STATE_BUILDING,
    BUILD_STATE_READY,
    BUILD_STATE_ERROR,
};
const char *build_state_name(enum build_state s);
enum build_state build_state_parse(const char *word);

struct template_record {
    char id[TEMPLATE_ID_MAX], name[129], build[TEMPLATE_ID_MAX], image[256];
    char start_cmd[1024], ready_cmd[1024], user[33], workdir[256];
    long cpu, memory_mb;
    long long created_at, updated_at;
    int public_;
};

struct build_record {
    char id[TEMPLATE_ID_MAX], template_id[TEMPLATE_ID_MAX], worker[33], sandbox[33];
    char step[16], reason[512], state_text[16];
    enum build_state state;
    long long created_at, finished_at;
};

/* 1 when id is spelled as a template (tpl-<20 hex>) or build id. Pure. */
int template_id_ok(const char *id);
int build_id_ok(const char *id);

/* 1 when the worker wid holds the sandbox of a build that is building and
 * whose target is in repository repo; 0 when not; -1 on a Redis failure. */
int build_push_allowed(struct rconn *rc, const char *wid, const char *repo);

#endif
