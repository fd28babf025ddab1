#include "worker_registry.h"

#include "log.h"
#include "respond.h"
#include "secret.h"

#include <stdio.h>
#include <string.h>

int worker_check_secret(struct request *req, const char *id, const char *secret, int *alive)
{
    char mac[SECRET_MAC_HEX];

    secret_mac_hex(req->conf->server_secret, secret, mac);
    return worker_check_mac(req->rc, req->cred.ws, id, mac, alive);
}

int worker_authenticate(struct request *req, char wid[33])
{
    const char *id = request_header(req, "HTTP_X_WORKER_ID");
    const char *secret = request_header(req, "HTTP_X_WORKER_SECRET");
    int ok, alive = 0;

    if (!id || !secret || !token_is_id(id)) {
        respond_error(req, 403, "X-Worker-Id and X-Worker-Secret of an enrolled worker required");
        return 0;
    }
    ok = worker_check_secret(req, id, secret, &alive);
    if (ok < 0) {
        respond_store_down(req);
        return -1;
    }
    if (ok) /* its secret checked out: the id is the caller's own */
        log_ctx_set(LOG_WORKER, id);
    if (!ok)
        respond_error(req, 403,
                      "this join token did not enroll that worker, or its secret is wrong");
    else if (!alive)
        respond_error(req, 410, "worker %s is no longer enrolled: handshake again", id);
    else
        snprintf(wid, 33, "%s", id);
    return ok && alive;
}
