/* The native sandbox routes. Every lookup is in the caller's workspace slot:
 * another tenant's sandbox is simply absent, so it answers exactly like an id
 * that never existed. */
#include "commands.h"
#include "handlers.h"
#include "lifecycle.h"
#include "log.h"
#include "respond.h"
#include "sandbox_list_parse.h"
#include "sandbox_spec_parse.h"
#include "sandbox_store.h"
#include "sandbox_view.h"
#include "sandbox_token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The envd access token is shown once, in the create answer: derived from the
 * gateway secret exactly as E2B's envdAccessToken (common/sandbox_token.c).
 * So is the traffic token of a private sandbox (one on an agent-mode worker,
 * decision 0062), as E2B's trafficAccessToken. */
static void add_envd_token(json_t *view, const struct sandbox_record *rec,
                           const char *gateway_secret)
{
    char token[SECRET_MAC_HEX];

    if (!*rec->id)
        return;
    if (rec->secure) {
        sandbox_token(gateway_secret, SANDBOX_TOKEN_ENVD, rec->id, token);
        json_object_set_new(view, "envd_access_token", json_string(token));
    }
    if (!rec->public_traffic) {
        sandbox_token(gateway_secret, SANDBOX_TOKEN_TRAFFIC, rec->id, token);
        json_object_set_new(view, "traffic_access_token", json_string(token));
    }
}

static void answer_record(struct request *req, int status, const char *sbid, int with_token)
{
    struct sandbox_record rec;
    int found = sandbox_read(req->rc, req->cred.ws, sbid, &rec);
    json_t *view;

    if (found <= 0) {
        if (found == 0)
            NOT_FOUND_SANDBOX(req);
        else
            respond_store_down(req);
        return;
    }
    view = sandbox_view(&rec);
    if (with_token)
        add_envd_token(view, &rec, req->conf->gateway_secret);
    respond_json(req, status, view);
    sandbox_record_free(&rec);
}

void h_sandbox_create(struct request *req)
{
    struct sandbox_spec spec;
    char sbid[SANDBOX_ID_MAX], msg[256];
    json_t *body = request_json_body(req);

    if (!body)
        return;
    if (sandbox_spec_parse(body, &spec, msg, sizeof(msg)) != 0) {
        json_decref(body);
        respond_error(req, 400, "%s", msg);
        return;
    }
    if (sandbox_create_and_wait(req, &spec, body, sbid) == 0)
        answer_record(req, 201, sbid, 1);
    json_decref(body);
}

void h_sandbox_get(struct request *req)
{
    if (!token_is_id(req->params[0])) {
        NOT_FOUND_SANDBOX(req);
        return;
    }
    answer_record(req, 200, req->params[0], 0);
}

/* How long a DELETE waits for its worker to say the sandbox is gone: a kill
 * is applied ahead of anything else the worker does (well under a second);
 * past this the worker is failing, and the answer says the record is gone
 * all the same (decision 0073). */
#define KILL_WAIT_MS 5000

/* The answer to a kill comes once its worker has removed the container and
 * routes nothing to it: a request made after it reaches no process of it.
 * The wait holds a thread, so it shares the budget of the creates and
 * pauses that wait: a worker that never confirms (a tenant's own, broken or
 * hostile) cannot make DELETEs take every thread; over it, no wait. */
static void await_kill(struct request *req, const struct kill_sent *k, const char *sbid)
{
    struct server *srv = req->thread->srv;
    int done = -2;

    if (atomic_fetch_add(&srv->create_waits, 1) < srv->conf.create_wait_max)
        done = command_kill_await(req->rc, k->pool, k->worker, sbid, KILL_WAIT_MS);
    atomic_fetch_sub(&srv->create_waits, 1);
    if (done != 1)
        log_sandbox("warn", sbid, NULL, "kill: %s; answered as deleted",
                    done == 0    ? "its worker did not confirm it within 5 s"
                    : done == -2 ? "too many waits on this handler to wait for its worker"
                                 : "the store failed while waiting for its worker");
}

void h_sandbox_delete(struct request *req)
{
    struct kill_sent k = {.wait = 1};
    int n = token_is_id(req->params[0]) ? sandbox_kill_sent(req->rc, req->cred.ws, req->params[0],
                                                            AUDIT_KILLED, req->actor, "deleted", &k)
                                        : 0;

    if (n == 1 && k.sent)
        await_kill(req, &k, req->params[0]);
    respond_change(req, n, "sandbox");
}

void h_sandbox_list(struct request *req)
{
    struct sandbox_list_query q;
    struct sandbox_list all;
    char err[128];
    json_t *list;

    if (sandbox_list_query_parse(req, &q, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (sandbox_list_read(req->rc, req->cred.ws, q.wanted, &all) != 0) {
        respond_store_down(req);
        return;
    }
    list = json_array();
    for (size_t i = 0; i < all.n; i++) {
        json_t *view = sandbox_view(&all.items[i]);
        if (!*q.metadata || metadata_matches(json_object_get(view, "metadata"), q.metadata))
            json_array_append_new(list, view);
        else
            json_decref(view);
    }
    sandbox_list_free(&all);
    respond_json(req, 200, json_pack("{s:o}", "sandboxes", list));
}
