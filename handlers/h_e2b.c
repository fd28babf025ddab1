/* The E2B control-plane surface (/sandboxes, /v2/sandboxes, /templates), as
 * the e2b SDK 2.x calls it. Creates go through sandbox_create_and_wait, i.e.
 * the same scheduler_create as the native API; lookups are in the caller's
 * workspace slot, so another tenant's sandbox is a 404 like a missing one. */
#include "clock.h"
#include "e2b_spec.h"
#include "e2b_timeout_parse.h"
#include "e2b_view.h"
#include "egress_seal.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The caller's record of a live sandbox (running, or paused or on the way
 * between): 0, or -1 after answering 404/503. */
static int live_record(struct request *req, struct sandbox_record *rec)
{
    int found = 0;

    sandbox_record_defaults(rec);
    if (token_is_id(req->params[0]))
        found = sandbox_read(req->rc, req->cred.ws, req->params[0], rec);
    if (found < 0) {
        respond_store_down(req);
        return -1;
    }
    if (found == 0 || !sandbox_is_live(rec)) {
        sandbox_record_free(rec);
        NOT_FOUND_SANDBOX(req);
        return -1;
    }
    return 0;
}

/* The policy's secrets sealed before anything stores it (egress_seal.h).
 * 0, or -1 after answering 500. */
static int seal_egress(struct request *req, struct sandbox_spec *spec)
{
    char *sealed;

    if (!spec->egress_json)
        return 0;
    sealed = egress_seal_text(req->conf->server_secret, req->cred.ws, spec->egress_json);
    if (!sealed) {
        respond_error(req, 500, "the egress policy's secrets could not be sealed");
        return -1;
    }
    free(spec->egress_json);
    spec->egress_json = sealed;
    return 0;
}

void h_e2b_create(struct request *req)
{
    struct sandbox_spec spec;
    struct sandbox_record rec;
    char sbid[SANDBOX_ID_MAX], msg[256];
    json_t *body = request_json_body(req);
    int status;

    if (!body)
        return;
    status = e2b_spec_parse(body, &spec, msg, sizeof(msg));
    if (status != 0) {
        json_decref(body);
        respond_error(req, status, "%s", msg);
        return;
    }
    if (seal_egress(req, &spec) != 0) {
        json_decref(body);
        sandbox_spec_free(&spec);
        return;
    }
    status = sandbox_create_and_wait(req, &spec, body, sbid);
    json_decref(body);
    if (status != 0)
        return;
    if (sandbox_read(req->rc, req->cred.ws, sbid, &rec) != 1) {
        respond_store_down(req);
        return;
    }
    respond_json(req, 201, e2b_view(&rec, E2B_SANDBOX, req->conf));
    sandbox_record_free(&rec);
}

void h_e2b_get(struct request *req)
{
    struct sandbox_record rec;

    if (live_record(req, &rec) != 0)
        return;
    respond_json(req, 200, e2b_view(&rec, E2B_DETAIL, req->conf));
    sandbox_record_free(&rec);
}

int body_flag(struct request *req, const json_t *body, const char *field)
{
    char err[128];
    int flag = e2b_flag_parse(body, field, err, sizeof(err));

    if (flag < 0)
        respond_error(req, 400, "%s", err);
    return flag;
}

long e2b_body_timeout(struct request *req, int required, int *keep_memory)
{
    json_t *body = required ? request_json_body(req) : request_json_optional(req);
    char err[160];
    long t;

    if (!body)
        return -1;
    t = e2b_timeout_parse(body, required, req->conf->ceilings[WS_LIMIT_TIMEOUT], keep_memory, err,
                          sizeof(err));
    json_decref(body);
    if (t == -1)
        respond_error(req, 400, "%s", err);
    return t;
}

void h_e2b_timeout(struct request *req)
{
    long t = e2b_body_timeout(req, 1, NULL);

    /* The deadline script itself refuses a sandbox that is not running (0). */
    if (t >= 0)
        respond_change(req,
                       token_is_id(req->params[0])
                           ? sandbox_set_deadline(req->rc, req->cred.ws, req->params[0],
                                                  clock_now_ms() + t * 1000, 0)
                           : 0,
                       "sandbox");
}

void h_e2b_connect(struct request *req)
{
    int keep_memory = 1;
    long t = e2b_body_timeout(req, 0, &keep_memory);
    struct sandbox_record rec;

    if (t == -1 || live_record(req, &rec) != 0)
        return;
    if (!sandbox_is_running(&rec)) {
        sandbox_record_free(&rec);
        e2b_connect_paused(req, t >= 0 ? t : -1, keep_memory);
        return;
    }
    /* Connecting never shortens a sandbox's life, it only extends it. */
    if (t >= 0 && sandbox_set_deadline(req->rc, req->cred.ws, req->params[0],
                                       clock_now_ms() + t * 1000, 1) < 0)
        respond_store_down(req);
    else
        respond_json(req, 200, e2b_view(&rec, E2B_SANDBOX, req->conf));
    sandbox_record_free(&rec);
}
