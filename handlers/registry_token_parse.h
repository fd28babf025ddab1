/* registry_token_parse.h: POST /v1/worker/registry-token's body and the rule
 * of who gets which rights on Corral's registry (docs/templates.md, decision
 * 0079). Pure: no Redis, no FastCGI; the handler asks the template store
 * whether a push is for a build on this worker and passes the answer in. */
#ifndef CORRAL_REGISTRY_TOKEN_PARSE_H
#define CORRAL_REGISTRY_TOKEN_PARSE_H

#include "registry_names.h"

#include <jansson.h>
#include <stddef.h>

struct registry_ask {
    char repo[REGISTRY_REPO_MAX];
    char ws[17];  /* the repository's workspace; "" the fleet's */
    char tpl[49]; /* its template */
    int push;
};

/* {"repository": "corral/w<ws>/<tpl>" | "corral/fleet/<tpl>", "push": bool
 * (absent or null: false)} into out. 0, or -1 with err (answered 400). */
int registry_ask_parse(const json_t *body, struct registry_ask *out, char *err, size_t errlen);

enum registry_verdict {
    REGISTRY_GRANTED = 0,
    REGISTRY_OTHER_WORKSPACE, /* a workspace's repository, asked by another's pool */
    REGISTRY_PUSH_DENIED,     /* a push that is not a build of this worker's */
};

/* What a worker of pool (its join token's workspace; "" the unscoped fleet)
 * may have. Pull: the fleet's repositories, and workspace W's when pool is W
 * or "". Push: only what it may pull, and only when push_allowed (the store:
 * the target of a build in state building whose sandbox is on this worker). */
enum registry_verdict registry_decide(const char *pool, const struct registry_ask *a,
                                      int push_allowed);

/* The 403's message of a refusal ("" for REGISTRY_GRANTED). */
const char *registry_verdict_message(enum registry_verdict v);

#endif
