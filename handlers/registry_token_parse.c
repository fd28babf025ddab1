/* The registry-token route's body and rule (registry_token_parse.h). */
#include "registry_token_parse.h"

#include <stdio.h>
#include <string.h>

#define REPO_RULE                                                                                  \
    "repository: must be a template's repository, corral/w<16 hex>/<template> or "                 \
    "corral/fleet/<template>"

int registry_ask_parse(const json_t *body, struct registry_ask *out, char *err, size_t errlen)
{
    const json_t *push = json_object_get(body, "push");
    const char *repo = json_string_value(json_object_get(body, "repository"));

    memset(out, 0, sizeof(*out));
    if (!repo || strlen(repo) >= sizeof(out->repo) ||
        registry_repo_parse(repo, out->ws, out->tpl) != 0) {
        memset(out, 0, sizeof(*out));
        snprintf(err, errlen, REPO_RULE);
        return -1;
    }
    if (push && !json_is_boolean(push) && !json_is_null(push)) {
        memset(out, 0, sizeof(*out));
        snprintf(err, errlen, "push: must be a boolean");
        return -1;
    }
    snprintf(out->repo, sizeof(out->repo), "%s", repo);
    out->push = json_is_true(push);
    return 0;
}

enum registry_verdict registry_decide(const char *pool, const struct registry_ask *a,
                                      int push_allowed)
{
    /* The unscoped fleet runs every workspace's sandboxes; a workspace's
     * pool runs only its own (and the fleet's templates). */
    if (a->ws[0] && pool[0] && strcmp(pool, a->ws) != 0)
        return REGISTRY_OTHER_WORKSPACE;
    if (a->push && push_allowed != 1)
        return REGISTRY_PUSH_DENIED;
    return REGISTRY_GRANTED;
}

const char *registry_verdict_message(enum registry_verdict v)
{
    switch (v) {
    case REGISTRY_OTHER_WORKSPACE:
        return "this worker's pool may not pull another workspace's templates";
    case REGISTRY_PUSH_DENIED:
        return "push only to the target of a build in progress on this worker";
    case REGISTRY_GRANTED:
        break;
    }
    return "";
}
