/* GET /v1/worker/tunnel: nginx's auth_request for a worker's tunnel (decision
 * 0087). The worker's upgrade reaches corral-tunneld only if this answers
 * 200; nginx then hands the daemon the worker id and pool named here, in
 * headers only nginx sets. Authenticated as a heartbeat is (join token of the
 * pool, worker id and secret), and only for a worker enrolled as tunnelled:
 * a worker with a data port has no tunnel to hold. */
#include "handlers.h"
#include "respond.h"
#include "worker_registry.h"
#include "worker_store.h"

#include <string.h>

void h_worker_tunnel(struct request *req)
{
    char wid[33];
    struct worker_route r;
    int alive;

    if (worker_authenticate(req, wid) != 1)
        return;
    alive = worker_route(req->rc, req->cred.ws, wid, &r);
    explicit_bzero(r.data_key, sizeof(r.data_key));
    if (alive < 0) {
        respond_store_down(req);
        return;
    }
    if (!alive || !r.tunnel) {
        /* 403: nginx's auth_request passes on 401 and 403 only */
        respond_error(req, 403,
                      "worker %s enrolled with a data_addr, not a tunnel: handshake "
                      "again with \"tunnel\": true",
                      wid);
        return;
    }
    respond_add_header(req, "X-Corral-Tunnel-Worker", wid);
    /* never empty: nginx drops a header set to "" (UPGRADE_FLEET_POOL) */
    respond_add_header(req, "X-Corral-Tunnel-Pool", req->cred.ws[0] ? req->cred.ws : "fleet");
    respond_empty(req, 200);
}
