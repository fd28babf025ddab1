/* create_wait.c: the create flow both APIs share, and what keeps a create
 * from outliving the client it was for.
 *
 * A waiting handler holds a lease on its create (the waiters zset, renewed
 * every second). A handler that dies stops renewing; corral-sched then kills
 * the sandbox and gives its slot back (sweep_abandoned_waits), so a crash
 * mid-create orphans nothing for more than a few seconds.
 *
 * With an Idempotency-Key header, a retry of the same request returns the same
 * sandbox (waiting for it if it is still starting), and its lease is a minute,
 * long enough for a client to retry after its connection broke. A key reused
 * with another body is refused (409). Decision 0027. */
#include "clock.h"
#include "handlers.h"
#include "lifecycle.h"
#include "log.h"
#include "respond.h"
#include "sandbox_store.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAITER_LEASE_MS 3000
#define KEYED_LEASE_MS 60000
#define WAIT_SLICE_MS 1000
#define IDEM_CLAIM_MS 10000
#define IDEM_TTL_MS 86400000LL
#define IDEM_KEY_MAX 255

/* How a wait for "running" came out; the answer follows from it alone. */
enum create_outcome {
    CREATE_RUNNING,
    CREATE_PENDING,    /* still starting (a look at the record, not a wait's end) */
    CREATE_TIMED_OUT,  /* 504: no worker started it in time */
    CREATE_FAILED,     /* 502: it ended while starting (why says how) */
    CREATE_STORE_DOWN, /* 503 */
};

struct idem {
    int on;
    char mac[SECRET_MAC_HEX];   /* names the key: the header's MAC, never the header */
    char print[SECRET_MAC_HEX]; /* the request body's fingerprint */
};

/* 0 ready (im->on says whether a key was given), -1 answered 400. */
static int idem_prepare(struct request *req, const json_t *body, struct idem *im)
{
    const char *h = request_header(req, "HTTP_IDEMPOTENCY_KEY");
    char *text;
    size_t n;

    memset(im, 0, sizeof(*im));
    if (!h)
        return 0;
    n = strlen(h);
    for (size_t i = 0; i < n; i++)
        if (h[i] < 0x21 || h[i] > 0x7e)
            n = 0;
    if (n == 0 || n > IDEM_KEY_MAX) {
        respond_error(req, 400, "Idempotency-Key: 1 to %d printable characters, no spaces",
                      IDEM_KEY_MAX);
        return -1;
    }
    text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) {
        respond_error(req, 500, "out of memory");
        return -1;
    }
    /* Under a label of its own: the header is the caller's choice, and the
     * same secret MACs volume tokens ("volume-token:..."), so a bare MAC of
     * it, read from Redis, could be one. */
    char labelled[IDEM_KEY_MAX + 32];
    snprintf(labelled, sizeof(labelled), "idempotency-key:%s", h);
    secret_mac_hex(req->conf->server_secret, labelled, im->mac);
    secret_mac_hex("idempotency fingerprint", text, im->print);
    free(text);
    im->on = 1;
    return 0;
}

/* 0 the key is ours (a fresh create), 1 a replay of sbid, -1 answered. */
static int idem_claim(struct request *req, const struct idem *im, char sbid[SANDBOX_ID_MAX])
{
    int64_t until = clock_now_ms() + req->conf->create_timeout_ms;

    while (clock_now_ms() < until) {
        char print[SECRET_MAC_HEX];
        int got = sandbox_idem_claim(req->rc, req->cred.ws, im->mac, IDEM_CLAIM_MS, sbid, print);
        if (got == 1)
            return 0;
        if (got < 0)
            break;
        if (*sbid && strcmp(print, im->print) != 0) {
            respond_error(req, 409, "Idempotency-Key: already used with a different request");
            return -1;
        }
        if (*sbid)
            return 1;
        usleep(50000); /* another handler is placing it: its id comes in a moment */
    }
    respond_store_down(req);
    return -1;
}

static void idem_forget(struct request *req, const struct idem *im)
{
    if (im->on)
        sandbox_idem_forget(req->rc, req->cred.ws, im->mac);
}

/* The record's state as an outcome; why says how it ended. */
static enum create_outcome record_state(struct request *req, const char *sbid, char *why,
                                        size_t whylen)
{
    struct sandbox_record rec;
    int found = sandbox_read(req->rc, req->cred.ws, sbid, &rec);
    enum create_outcome o = CREATE_FAILED;

    if (found < 0)
        o = CREATE_STORE_DOWN;
    else if (found == 0)
        snprintf(why, whylen, "the sandbox ended while starting");
    else if (sandbox_is_running(&rec))
        o = CREATE_RUNNING;
    else if (rec.state == SANDBOX_STATE_PENDING)
        o = CREATE_PENDING;
    else
        snprintf(why, whylen, "the sandbox ended while starting: %s",
                 *rec.reason ? rec.reason : sandbox_state_shown(&rec));
    sandbox_record_free(&rec);
    return o;
}

/* Waits for "running" in slices, renewing the lease between them; the record
 * is checked too, since another waiter (a replay) may have taken the wake.
 * A record seen running before its wake gets one more slice: the report
 * writes the state, then its audit event, then the wake, and an answer in
 * between would let the caller's next act (a kill) be audited first. */
static enum create_outcome wait_running(struct request *req, const char *sbid, long lease_ms,
                                        char *why, size_t whylen)
{
    int64_t deadline = clock_now_ms() + req->conf->create_timeout_ms;
    enum create_outcome o;
    int seen_running = 0;

    for (;;) {
        int64_t left = deadline - clock_now_ms();
        char msg[300];
        int woken;
        if (sandbox_wait_hold(req->rc, req->cred.ws, sbid, clock_now_ms() + lease_ms) != 0)
            return CREATE_STORE_DOWN;
        if (left <= 0 && seen_running)
            return CREATE_RUNNING;
        if (left <= 0) {
            snprintf(why, whylen, "no worker started the sandbox within %ld ms",
                     req->conf->create_timeout_ms);
            return CREATE_TIMED_OUT;
        }
        woken =
            sandbox_wait_wake(req->rc, req->cred.ws, sbid,
                              (int)(left > WAIT_SLICE_MS ? WAIT_SLICE_MS : left), msg, sizeof(msg));
        if (woken < 0)
            return CREATE_STORE_DOWN;
        if (woken) {
            snprintf(why, whylen, "%s", strncmp(msg, "failed:", 7) == 0 ? msg + 7 : msg);
            return sandbox_state_parse(msg) == SANDBOX_STATE_RUNNING ? CREATE_RUNNING
                                                                     : CREATE_FAILED;
        }
        o = record_state(req, sbid, why, whylen);
        if (o == CREATE_RUNNING && !seen_running++)
            continue;
        if (o != CREATE_PENDING)
            return o;
    }
}

/* After the wait: nothing half-created survives a failed create. 0 it runs,
 * else the status of the answer (msg says why). */
static int settle(struct request *req, const char *sbid, enum create_outcome o, const char *why,
                  char *msg, size_t msglen)
{
    sandbox_wait_release(req->rc, req->cred.ws, sbid);
    if (o == CREATE_RUNNING)
        return 0;
    sandbox_kill(req->rc, req->cred.ws, sbid, AUDIT_KILLED, req->actor,
                 o == CREATE_STORE_DOWN ? "state store unavailable" : why);
    if (o == CREATE_TIMED_OUT) {
        snprintf(msg, msglen, "%s", why);
        return 504;
    }
    if (o == CREATE_FAILED) {
        snprintf(msg, msglen, "the worker could not start the sandbox: %s", why);
        return 502;
    }
    snprintf(msg, msglen, "state store unavailable");
    return 503;
}

static int finish(struct request *req, const char *sbid, const struct idem *im,
                  enum create_outcome o, const char *why)
{
    char msg[400];
    int status = settle(req, sbid, o, why, msg, sizeof(msg));

    if (status == 0)
        return 0;
    idem_forget(req, im);
    if (status == 503)
        respond_store_down(req);
    else
        respond_error(req, status, "%s", msg);
    return -1;
}

/* A replay: the sandbox the first request made, once it runs. */
static int replay(struct request *req, const char *sbid, const struct idem *im)
{
    char why[300] = "";
    enum create_outcome o;

    log_ctx_set(LOG_SANDBOX, sbid);
    o = record_state(req, sbid, why, sizeof(why));
    if (o == CREATE_PENDING)
        o = wait_running(req, sbid, KEYED_LEASE_MS, why, sizeof(why));
    if (o == CREATE_RUNNING) {
        sandbox_wait_release(req->rc, req->cred.ws, sbid);
        return 0;
    }
    if (o == CREATE_STORE_DOWN) {
        respond_store_down(req);
        return -1;
    }
    /* It ended: the key is free again for a new attempt. */
    idem_forget(req, im);
    respond_error(req, 409, "Idempotency-Key: its sandbox %s did not start or has ended (%s)", sbid,
                  why);
    return -1;
}

static int fresh(struct request *req, struct sandbox_spec *spec, const struct idem *im,
                 char sbid[SANDBOX_ID_MAX])
{
    struct server *srv = req->thread->srv;
    struct sched_error err;
    char why[300] = "";
    enum create_outcome o;

    if (scheduler_create(req->rc, &srv->sched, req->cred.ws, req->actor, spec, sbid, &err)) {
        idem_forget(req, im);
        respond_error(req, err.status, "%s", err.message);
        return -1;
    }
    log_ctx_set(LOG_SANDBOX, sbid);
    log_info("create admitted (template %s); waiting for its worker", spec->template_id);
    if (im->on)
        sandbox_idem_record(req->rc, req->cred.ws, im->mac, sbid, im->print, IDEM_TTL_MS);
    o = wait_running(req, sbid, im->on ? KEYED_LEASE_MS : WAITER_LEASE_MS, why, sizeof(why));
    return finish(req, sbid, im, o, why);
}
int sandbox_create_and_wait(struct request *req, struct sandbox_spec *spec, const json_t *body,
                            char sbid[SANDBOX_ID_MAX])
{
    struct server *srv = req->thread->srv;
    struct idem im;
    int rv = -1, claim = -1;

    /* A create holds its thread until the worker reports; bounded per process
     * (see corral_conf.c) so that heartbeats always find a thread. */
    if (atomic_fetch_add(&srv->create_waits, 1) >= srv->conf.create_wait_max) {
        respond_error(req, 503, "too many creates in flight on this handler; retry shortly");
    } else if (idem_prepare(req, body, &im) == 0 &&
               (claim = im.on ? idem_claim(req, &im, sbid) : 0) >= 0) {
        rv = claim == 1 ? replay(req, sbid, &im) : fresh(req, spec, &im, sbid);
    }
    atomic_fetch_sub(&srv->create_waits, 1);
    sandbox_spec_free(spec);
    return rv;
}

int sandbox_create_quiet(struct request *req, struct sandbox_spec *spec, char sbid[SANDBOX_ID_MAX],
                         char *msg, size_t msglen)
{
    struct server *srv = req->thread->srv;
    struct sched_error err;
    char why[300] = "";
    int status;

    if (atomic_fetch_add(&srv->create_waits, 1) >= srv->conf.create_wait_max) {
        snprintf(msg, msglen, "too many creates in flight on this handler; retry shortly");
        status = 503;
    } else if (scheduler_create(req->rc, &srv->sched, req->cred.ws, req->actor, spec, sbid, &err) !=
               0) {
        snprintf(msg, msglen, "%s", err.message);
        status = err.status;
    } else {
        status = settle(req, sbid, wait_running(req, sbid, WAITER_LEASE_MS, why, sizeof(why)), why,
                        msg, msglen);
    }
    atomic_fetch_sub(&srv->create_waits, 1);
    return status;
}
