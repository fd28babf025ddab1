/* POST /v1/worker/handshake: a worker enrols (or re-enrols after a restart)
 * with its capabilities. Its pool is the join token's workspace, never a field
 * of the body. */
#include "clock.h"
#include "commands.h"
#include "handlers.h"
#include "handshake_parse.h"
#include "log.h"
#include "respond.h"
#include "secret.h"
#include "worker_registry.h"
#include "worker_store.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* The worker_id a returning worker may keep: same pool, right secret, not
 * deleted. 1 reuse (dead: reset its usage), 0 new id, -1 refused (answered). */
static int returning_worker(struct request *req, const struct handshake_body *hb, char wid[33],
                            int *was_dead)
{
    int ok, alive = 0;

    if (!hb->worker_id)
        return 0;
    ok = worker_check_secret(req, hb->worker_id, hb->worker_secret, &alive);
    if (ok < 0) {
        respond_store_down(req);
        return -1;
    }
    *was_dead = ok && !alive;
    if (!ok) {
        respond_error(req, 403,
                      "worker_id is not a worker this workspace enrolled with that secret");
        return -1;
    }
    snprintf(wid, 33, "%s", hb->worker_id);
    return 1;
}

/* The command stream first: once the record says alive, creates may be sent
 * to it. The record itself is written at once (worker_enrol). */
static int store_worker(struct request *req, const char *wid, const struct handshake_body *c,
                        const char *mac, const char *data_key, int reset_usage, char *prev_key,
                        size_t prev_len)
{
    char *rt = json_dumps(c->runtimes_json, JSON_COMPACT);
    char *tm = json_dumps(c->templates_json, JSON_COMPACT);
    struct worker_caps wc = {.hostname = c->hostname,
                             .runtimes = c->runtimes,
                             .runtimes_json = rt,
                             .templates = c->templates,
                             .templates_json = tm,
                             .egress = c->egress,
                             .public_ok = c->public_ok,
                             .slots = c->slots,
                             .cpu = c->cpu,
                             .mem = c->mem,
                             .data_addr = c->data_addr};
    struct worker_enrolment e = {.pool = req->cred.ws,
                                 .wid = wid,
                                 .secret_mac = mac,
                                 .join_token = req->cred.id,
                                 .data_key = data_key,
                                 .lease_until = clock_now_ms() + req->conf->lease_ms,
                                 .reset_usage = reset_usage};
    int rv = -1;

    if (rt && tm && command_stream_init(req->rc, req->cred.ws, wid) == 0)
        rv = worker_enrol(req->rc, &e, &wc, prev_key, prev_len);
    free(rt);
    free(tm);
    return rv;
}

/* A returning worker keeps accepting the key it signed with until now that
 * long after re-enrolling: gateways cache a route (and its key) for a few
 * seconds, so no request fails in between. */
#define PREVIOUS_KEY_GRACE_MS 10000

static json_t *handshake_answer(struct request *req, const char *wid, const char *secret,
                                const char *data_key, const char *prev_key)
{
    json_t *a =
        json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "worker_id", wid, "workspace", req->cred.ws,
                  "worker_secret", secret, "data_key", data_key, "poll_ms",
                  (json_int_t)req->conf->poll_ms, "lease_ms", (json_int_t)req->conf->lease_ms);

    if (a && prev_key[0]) {
        json_object_set_new(a, "previous_data_key", json_string(prev_key));
        json_object_set_new(a, "previous_valid_ms", json_integer(PREVIOUS_KEY_GRACE_MS));
    }
    return a;
}

/* A new worker joined, or a dead one came back; a live one handshaking again
 * (a restart of workerd) changes nothing the audit tracks. Its pool's stream:
 * the unscoped fleet's is the operator's (decision 0045). */
static void audit_enrolment(struct request *req, const char *wid, int again, int was_dead)
{
    char actor[AUDIT_ACTOR_MAX];
    struct audit_event e = {.event = again ? AUDIT_WORKER_REJOINED : AUDIT_WORKER_JOINED,
                            .actor = actor,
                            .worker = wid,
                            .credential = req->cred.id};

    if (again && !was_dead)
        return;
    audit_actor_worker(actor, wid);
    audit_append(req->rc, req->cred.ws, &e);
}

void h_worker_handshake(struct request *req)
{
    json_t *body = request_json_body(req);
    char wid[33], secret[TOKEN_SECRET_MAX], mac[SECRET_MAC_HEX], err[256], data_key[65];
    char prev_key[65] = "";
    struct handshake_body hb;
    int again, was_dead = 0, st;

    if (!body)
        return;
    st = handshake_parse(body, &req->conf->data_allow, req->cred.ws[0] != '\0', &hb, err,
                         sizeof(err));
    if (st != 0) {
        respond_error(req, st, "%s", err);
        json_decref(body);
        return;
    }
    again = returning_worker(req, &hb, wid, &was_dead);
    if (again < 0) {
        json_decref(body);
        return;
    }
    if (again)
        snprintf(secret, sizeof(secret), "%s", hb.worker_secret);
    /* The data key signs gateway requests to this worker: new at every handshake. */
    if ((!again && (secret_random_hex(wid, 8) || secret_random_hex(secret, 24))) ||
        secret_random_hex(data_key, 32)) {
        respond_error(req, 500, "no randomness");
        json_decref(body);
        return;
    }
    secret_mac_hex(req->conf->server_secret, secret, mac);
    log_ctx_set(LOG_WORKER, wid);
    if (store_worker(req, wid, &hb, mac, data_key, !again || was_dead, prev_key,
                     sizeof(prev_key)) != 0) {
        respond_store_down(req);
    } else {
        audit_enrolment(req, wid, again, was_dead);
        log_info("enrolled (%s worker, %ld slots, data %s)",
                 !again     ? "new"
                 : was_dead ? "returning dead"
                            : "returning",
                 hb.slots, hb.data_addr);
        respond_json(req, 200, handshake_answer(req, wid, secret, data_key, prev_key));
    }
    json_decref(body);
}
