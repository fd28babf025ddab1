/* The volume file API (E2B's spec/openapi-volumecontent.yml, decision 0071):
 * GET|PATCH|DELETE /volumecontent/{id}/path, GET|POST .../dir, GET|PUT
 * .../file, with the volume's token (router.c checked it). The files are on
 * the worker that holds the volume: this finds that worker's data port and
 * carries the request there (volume_relay.c), where the operation itself is
 * done, confined to the volume (workerd/volume_files.c). */
#include "handlers.h"
#include "log.h"
#include "respond.h"
#include "server.h"
#include "volume.h"
#include "volume_relay.h"
#include "worker_store.h"
#include "tunnel_store.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the volume's files are: 0 with t filled, or -1 answered. */
static int target_of(struct request *req, struct volume_target *t)
{
    struct volume_record v;
    struct worker_route r;
    char why[160];
    int found = volume_read(req->rc, req->cred.ws, req->params[0], &v), alive = 0;

    if (found == 1)
        alive = worker_route(req->rc, v.pool, v.worker, &r);
    if (found < 0 || alive < 0) {
        respond_store_down(req);
        return -1;
    }
    if (found == 0) {
        respond_error(req, 404, "volume not found");
        return -1;
    }
    if (alive == 0) {
        respond_add_header(req, "Retry-After", "1");
        respond_error(req, 503,
                      "volume %s is on worker %s, which is not alive; its files are there "
                      "again when it is",
                      v.id, v.worker);
        return -1;
    }
    if (r.tunnel && strcmp(r.data_addr, TUNNEL_DATA_ADDR) == 0) {
        respond_add_header(req, "Retry-After", "1");
        respond_error(req, 503, "worker %s is unreachable: its tunnel is down", v.worker);
        return -1;
    }
    /* The address came from the worker's handshake (or the tunnel daemon),
     * checked then; checked again before connecting, as the gateway does
     * (decisions 0032, 0087). */
    if (data_addr_check(r.tunnel ? &req->conf->tunnel_allow : &req->conf->data_allow, r.data_addr,
                        strlen(r.data_addr), t->addr, why, sizeof(why)) != 0) {
        log_about("warn", &(struct log_about){.workspace = req->cred.ws, .worker = v.worker},
                  "volume relay refused: %s", why);
        respond_error(req, 503, "the data port of worker %s is outside worker_data_*", v.worker);
        return -1;
    }
    snprintf(t->key, sizeof(t->key), "%s", r.data_key);
    volume_docker_name(v.id, t->dname, sizeof(t->dname));
    snprintf(t->ws, sizeof(t->ws), "%s", req->cred.ws);
    explicit_bzero(&r, sizeof(r));
    return 0;
}

void h_volume_content(struct request *req)
{
    struct server *srv = req->thread->srv;
    const char *cl = request_header(req, "CONTENT_LENGTH");
    long long len = cl && *cl ? atoll(cl) : 0;
    /* A relay holds its thread for the transfer: a quarter of them at most,
     * so that files never starve the rest of the API. */
    int most = (int)(req->conf->threads / 4 > 0 ? req->conf->threads / 4 : 1);
    struct volume_target t;

    if (strcmp(req->params[0], req->cred.id) != 0) {
        respond_error(req, 403, "this volume token is for another volume");
        return;
    }
    if (len > VOLUME_FILE_MAX) {
        respond_error(req, 413, "a file of %lld bytes is over the volume upload limit of %lld", len,
                      (long long)VOLUME_FILE_MAX);
        return;
    }
    if (!volume_relay_query_ok(req->query)) { /* "" when none: the worker says what is missing */
        respond_error(req, 400, "malformed query string");
        return;
    }
    if (target_of(req, &t) != 0)
        return;
    if (atomic_fetch_add(&srv->volume_relays, 1) >= most) {
        respond_add_header(req, "Retry-After", "1");
        respond_error(req, 503, "too many volume file transfers at once; retry shortly");
    } else {
        volume_relay(req, &t, len);
    }
    atomic_fetch_sub(&srv->volume_relays, 1);
    explicit_bzero(t.key, sizeof(t.key));
}
