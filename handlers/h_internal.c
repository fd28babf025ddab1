/* GET /v1/internal/route/{id}: the data plane's one lookup (the nginx module's
 * subrequest). Reachable only through nginx's internal location, which sets the
 * FastCGI param CORRAL_GATEWAY_KEY; a client cannot set a FastCGI param, only
 * HTTP_* ones. See docs/data-plane.md. */
#include "handlers.h"
#include "respond.h"
#include "route.h"
#include "secret.h"

#include <stdio.h>
#include <string.h>

int internal_caller(struct request *req)
{
    const char *key = request_header(req, "CORRAL_GATEWAY_KEY");

    return key && secret_equal(req->conf->gateway_secret, key);
}

/* The route in headers, the way nginx's auth_request reads an answer: the
 * module takes them from the subrequest's upstream headers, and the body is
 * discarded (docs/data-plane.md). */
static void answer_route(struct request *req, const char *sbid, const struct route *rt)
{
    respond_add_header(req, "X-Corral-Sandbox-Id", sbid);
    respond_add_header(req, "X-Corral-Data-Addr", rt->worker.data_addr);
    respond_add_header(req, "X-Corral-Data-Key", rt->worker.data_key);
    respond_add_header(req, "X-Corral-Secure", rt->secure ? "1" : "0");
    respond_add_header(req, "X-Corral-Public", rt->public ? "1" : "0");
    if (rt->mask_host[0]) /* decision 0091: the module sends it as the Host */
        respond_add_header(req, "X-Corral-Mask-Host", rt->mask_host);
    respond_empty(req, 200);
}

void h_internal_route(struct request *req)
{
    const char *sbid = req->params[0];
    struct route rt;
    int found;

    req->quiet = 1; /* one per data-plane request: nginx's log has them */
    if (!internal_caller(req)) {
        respond_error(req, 404, "no route %s %s", req->method, req->path);
        return;
    }
    found = token_is_id(sbid) ? route_lookup(req->rc, sbid, &rt) : 0;
    /* autoResume: traffic to a paused sandbox resumes it (decision 0044). */
    if (found == 2)
        found = resume_for_traffic(req, rt.ws, sbid) == 1 ? route_lookup(req->rc, sbid, &rt)
                                                          : ROUTE_PAUSED;
    /* Paused: 409, which the gateway does not cache, so that a resume made
     * through any gateway host is seen by all at once (issue 26). */
    if (found == 2 || found == ROUTE_PAUSED)
        respond_error(req, 409, "sandbox %s is paused", sbid);
    else if (found < 0)
        respond_store_down(req);
    else if (!found)
        NOT_FOUND_SANDBOX(req);
    else
        answer_route(req, sbid, &rt);
}
