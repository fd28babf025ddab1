/* Pause and resume (decision 0044), on both surfaces: E2B's
 * /sandboxes/{id}/pause, /resume, /refreshes and a connect that resumes, and
 * the native /v1/sandboxes/{id}/pause and /resume. The work is
 * scheduler/pause.c's; this file turns its outcomes into answers. A wait
 * holds its thread, so it counts against the same per-process budget as a
 * create's. Either kind of pause (decision 0074): E2B's body {"memory":
 * false} (the SDK's keepMemory), the native {"keep_memory": false}, keeps
 * only the files; the same on a resume (E2B's connect onResume "reboot")
 * starts a sandbox paused with its memory afresh. */
#include "agent_refusal.h"
#include "audit.h"
#include "clock.h"
#include "e2b_timeout_parse.h"
#include "e2b_view.h"
#include "handlers.h"
#include "log.h"
#include "pause.h"
#include "respond.h"
#include "sandbox_store.h"
#include "sandbox_view.h"
#include "server.h"

#include <stdio.h>
#include <string.h>

typedef enum life_outcome (*life_fn)(struct request *req, long timeout_s, int keep_memory,
                                     long *limit, char *why, size_t whylen);

static enum life_outcome do_pause(struct request *req, long timeout_s, int keep_memory, long *limit,
                                  char *why, size_t whylen)
{
    (void)timeout_s;
    (void)limit;
    return sandbox_pause(req->rc, &req->thread->srv->sched, req->cred.ws, req->params[0],
                         req->actor, keep_memory, (int)req->conf->create_timeout_ms, why, whylen);
}

static enum life_outcome do_resume(struct request *req, long timeout_s, int keep_memory,
                                   long *limit, char *why, size_t whylen)
{
    return sandbox_resume(req->rc, &req->thread->srv->sched, req->cred.ws, req->params[0],
                          req->actor, timeout_s, !keep_memory, (int)req->conf->create_timeout_ms,
                          limit, why, whylen);
}

/* The optional body's flag field (absent: 1), or -1 after answering 400. */
static int body_keep_memory(struct request *req, const char *field)
{
    json_t *body = request_json_optional(req);
    int keep;

    if (!body)
        return -1;
    keep = body_flag(req, body, field);
    json_decref(body);
    return keep;
}

/* Runs fn within the wait budget. Answers every outcome but DONE and
 * ALREADY, which it returns for the caller to answer; -1 when answered. */
static int run(struct request *req, life_fn fn, long timeout_s, int keep_memory,
               const char *already_msg)
{
    struct server *srv = req->thread->srv;
    char why[300] = "";
    long limit = 0;
    enum life_outcome o = LIFE_ABSENT;

    if (atomic_fetch_add(&srv->create_waits, 1) >= srv->conf.create_wait_max) {
        atomic_fetch_sub(&srv->create_waits, 1);
        respond_error(req, 503, "too many sandboxes starting on this handler; retry shortly");
        return -1;
    }
    if (token_is_id(req->params[0]))
        o = fn(req, timeout_s, keep_memory, &limit, why, sizeof(why));
    atomic_fetch_sub(&srv->create_waits, 1);
    switch (o) {
    case LIFE_DONE:
    case LIFE_ALREADY:
        return (int)o;
    case LIFE_ABSENT:
        NOT_FOUND_SANDBOX(req);
        break;
    case LIFE_BUSY:
        respond_error(req, 409, "sandbox %s is %s; retry shortly", req->params[0], already_msg);
        break;
    case LIFE_OVER_LIMIT: /* a create's refusal, in the same words */
        respond_error(req, 403,
                      "admission: the workspace is at its limit of %ld concurrent sandboxes "
                      "(max_concurrent_sandboxes); a paused sandbox needs a place to resume",
                      limit);
        break;
    case LIFE_SLOW:
        respond_error(req, 504, "the sandbox's worker did not answer in time; it may still");
        break;
    case LIFE_NETWORK:
        respond_error(req, 409, "%s", why);
        break;
    case LIFE_FAILED:
        respond_error(req, 404, "%s", why);
        break;
    case LIFE_STORE_DOWN:
        respond_store_down(req);
        break;
    }
    return -1;
}

/* The record after a transition, rendered by view; 503 if it cannot be read. */
static void answer_record(struct request *req, int status, int e2b)
{
    struct sandbox_record rec;

    if (sandbox_read(req->rc, req->cred.ws, req->params[0], &rec) != 1) {
        respond_store_down(req);
        return;
    }
    respond_json(req, status, e2b ? e2b_view(&rec, E2B_SANDBOX, req->conf) : sandbox_view(&rec));
    sandbox_record_free(&rec);
}

/* E2B: 204, or 409 when it is paused already (the SDK's pause() says false). */
void h_e2b_pause(struct request *req)
{
    int keep = agent_refusal(req, "paused") ? -1 : body_keep_memory(req, "memory");
    int o = keep < 0 ? -1 : run(req, do_pause, -1, keep, "starting or resuming");

    if (o == LIFE_DONE)
        respond_empty(req, 204);
    else if (o == LIFE_ALREADY)
        respond_error(req, 409, "sandbox %s is already paused", req->params[0]);
}

/* E2B's resume: 201 with the sandbox; 409 when it runs (the spec says so). */
void h_e2b_resume(struct request *req)
{
    int keep = 1;
    long t = e2b_body_timeout(req, 0, &keep);
    int o = t == -1 ? -1 : run(req, do_resume, t, keep, "being paused or starting");

    if (o == LIFE_DONE)
        answer_record(req, 201, 1);
    else if (o == LIFE_ALREADY)
        respond_error(req, 409, "sandbox %s is already running", req->params[0]);
}

/* A connect to a paused sandbox resumes it: 201, as E2B answers. */
void e2b_connect_paused(struct request *req, long timeout_s, int keep_memory)
{
    int o = run(req, do_resume, timeout_s, keep_memory, "being paused or starting");

    if (o == LIFE_DONE)
        answer_record(req, 201, 1);
    else if (o == LIFE_ALREADY)
        answer_record(req, 200, 1);
}

/* POST /sandboxes/{id}/refreshes {"duration": s}: lives at least s more, but
 * never past the operator's maximum life from now (sandbox_max_timeout_s,
 * which bounds setTimeout too): a longer duration is cut to it, not refused,
 * as a refresh is a keep-alive that must not start failing on a stack with a
 * short maximum. Another workspace's sandbox is not found (its record is
 * looked up under the caller's workspace). */
void h_e2b_refreshes(struct request *req)
{
    json_t *body = request_json_optional(req);
    long d, most = req->conf->ceilings[WS_LIMIT_TIMEOUT];
    char err[128];

    if (!body)
        return;
    d = e2b_refresh_parse(body, err, sizeof(err));
    json_decref(body);
    if (d < 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (d > most)
        d = most;
    respond_change(req,
                   token_is_id(req->params[0])
                       ? sandbox_set_deadline(req->rc, req->cred.ws, req->params[0],
                                              clock_now_ms() + d * 1000, 1)
                       : 0,
                   "sandbox");
}

/* Native: 200 with the sandbox either way (a pause of a paused one changes
 * nothing and says so by its state). */
void h_sandbox_pause(struct request *req)
{
    int keep = agent_refusal(req, "paused") ? -1 : body_keep_memory(req, "keep_memory");

    if (keep >= 0 && run(req, do_pause, -1, keep, "starting or resuming") >= 0)
        answer_record(req, 200, 0);
}

void h_sandbox_resume(struct request *req)
{
    int keep = body_keep_memory(req, "keep_memory");

    if (keep >= 0 && run(req, do_resume, -1, keep, "being paused or starting") >= 0)
        answer_record(req, 200, 0);
}

int resume_for_traffic(struct request *req, const char *ws, const char *sbid)
{
    struct server *srv = req->thread->srv;
    char why[300];
    long limit = 0;
    enum life_outcome o = LIFE_BUSY;

    if (atomic_fetch_add(&srv->create_waits, 1) < srv->conf.create_wait_max)
        o = sandbox_resume(req->rc, &srv->sched, ws, sbid, AUDIT_ACTOR_GATEWAY, -1, 0,
                           (int)req->conf->create_timeout_ms, &limit, why, sizeof(why));
    atomic_fetch_sub(&srv->create_waits, 1);
    if (o != LIFE_DONE && o != LIFE_ALREADY)
        log_about("warn", &(struct log_about){.workspace = ws, .sandbox = sbid},
                  "traffic did not resume it (outcome %d)", (int)o);
    return o == LIFE_DONE || o == LIFE_ALREADY;
}
