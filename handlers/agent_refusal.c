#include "agent_refusal.h"

#include "respond.h"
#include "sandbox_store.h"

#include <string.h>

int agent_refusal(struct request *req, const char *what)
{
    struct sandbox_record rec;
    int found, agent;

    if (!token_is_id(req->params[0]))
        return 0;
    found = sandbox_read(req->rc, req->cred.ws, req->params[0], &rec);
    if (found < 0) {
        respond_store_down(req);
        return -1;
    }
    if (found == 0)
        return 0;
    agent = strcmp(rec.runtime, AGENT_RUNTIME_NAME) == 0;
    sandbox_record_free(&rec);
    if (agent)
        respond_error(req, 409,
                      "sandbox %s runs in agent mode on a person's machine: it cannot be %s "
                      "(only containers can)",
                      req->params[0], what);
    return agent;
}
