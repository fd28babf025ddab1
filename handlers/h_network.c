/* PUT /v1/sandboxes/{id}/network and PUT /sandboxes/{id}/network (E2B): a new
 * egress policy is recorded for the sandbox's next start (a redelivery, a
 * resume: decision 0074) and the running container keeps the one it was
 * created with (docs/decisions/0022). A resume that keeps the memory cannot
 * add or remove the proxy: it refuses then, naming why (scheduler/pause.c).
 * Lookups are in the caller's workspace slot, so another tenant's sandbox
 * answers exactly like a missing one. */
#include "e2b_spec.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_spec_parse.h"
#include "sandbox_store.h"

#include <stdlib.h>

#define APPLIES_MESSAGE                                                                            \
    "recorded; the running sandbox keeps the policy it was created with, the new one applies "     \
    "when it next starts: its next resume (adding or removing a policy needs a resume without "    \
    "memory), or a redelivery"

/* Records policy (NULL: none) as the sandbox's next one. 0, or -1 answered:
 * 404 unknown or foreign, ended_status when it has ended, 503. */
static int record_next(struct request *req, const char *policy, int ended_status)
{
    int n = token_is_id(req->params[0])
                ? sandbox_set_egress_next(req->rc, req->cred.ws, req->params[0], policy)
                : 0;

    if (n < 0)
        respond_store_down(req);
    else if (n == 0 || (n == 2 && ended_status == 404))
        NOT_FOUND_SANDBOX(req);
    else if (n == 2)
        respond_error(req, ended_status,
                      "sandbox has ended: there is no next start to apply a network policy to");
    return n == 1 ? 0 : -1;
}

typedef int (*network_parser)(const json_t *body, char **policy, char *err, size_t errlen);

/* Reads the body and parses it with parse (-1 means 400, else the status). 0
 * with *policy (NULL: no policy), or -1 after answering. */
static int read_policy(struct request *req, network_parser parse, char **policy)
{
    json_t *body = request_json_body(req);
    char err[256];
    int status;

    *policy = NULL;
    if (!body)
        return -1;
    status = parse(body, policy, err, sizeof(err));
    json_decref(body);
    if (status != 0)
        respond_error(req, status < 0 ? 400 : status, "%s", err);
    return status != 0 ? -1 : 0;
}

void h_sandbox_network(struct request *req)
{
    char *policy;

    if (read_policy(req, sandbox_network_parse, &policy) != 0)
        return;
    if (record_next(req, policy, 409) == 0)
        respond_json(req, 200,
                     json_pack("{s:s, s:o, s:s, s:s}", "sandbox_id", req->params[0], "egress",
                               policy ? json_loads(policy, 0, NULL) : json_null(), "applies",
                               "next_start", "message", APPLIES_MESSAGE));
    free(policy);
}

/* E2B answers 204 and applies the change live; Corral answers 204 too (the
 * SDK's updateNetwork throws on anything else) and applies it at next start,
 * as docs/api.md says. */
void h_e2b_network(struct request *req)
{
    char *policy;

    if (read_policy(req, e2b_network_parse, &policy) != 0)
        return;
    if (record_next(req, policy, 404) == 0)
        respond_empty(req, 204);
    free(policy);
}
