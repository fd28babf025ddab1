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
#include "keys.h"
#include "lifecycle.h"
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

struct idem {
    int on;
    char key[200];              /* Redis key: the header's MAC, never the header */
    char print[SECRET_MAC_HEX]; /* the request body's fingerprint */
};

/* 0 ready (im->on says whether a key was given), -1 answered 400. */
static int idem_prepare(struct request *req, const json_t *body, struct idem *im)
{
    const char *h = request_header(req, "HTTP_IDEMPOTENCY_KEY");
    char mac[SECRET_MAC_HEX], *text;
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
    secret_mac_hex(req->conf->server_secret, h, mac);
    secret_mac_hex("idempotency fingerprint", text, im->print);
    free(text);
    snprintf(im->key, sizeof(im->key), K_IDEM, req->cred.ws, mac);
    im->on = 1;
    return 0;
}

/* 0 the key is ours (a fresh create), 1 a replay of sbid, -1 answered. */
static int idem_claim(struct request *req, const struct idem *im, char sbid[SANDBOX_ID_MAX])
{
    int64_t until = clock_now_ms() + req->conf->create_timeout_ms;

    while (clock_now_ms() < until) {
        redisReply *r = rconn_cmd(req->rc, 0, "SET %s claim NX PX %d", im->key, IDEM_CLAIM_MS);
        char id[SANDBOX_ID_MAX] = "", print[SECRET_MAC_HEX] = "";
        int got;
        if (r && r->type == REDIS_REPLY_STATUS) {
            freeReplyObject(r);
            return 0;
        }
        if (r)
            freeReplyObject(r);
        r = rconn_cmd(req->rc, 0, "GET %s", im->key);
        if (!r)
            break;
        got = reply_str(r) && sscanf(reply_str(r), "%32[0-9a-f]:%64s", id, print) == 2;
        freeReplyObject(r);
        if (got && strcmp(print, im->print) != 0) {
            respond_error(req, 409, "Idempotency-Key: already used with a different request");
            return -1;
        }
        if (got) {
            snprintf(sbid, SANDBOX_ID_MAX, "%s", id);
            return 1;
        }
        usleep(50000); /* another handler is placing it: its id comes in a moment */
    }
    respond_store_down(req);
    return -1;
}

static void idem_record(struct request *req, const struct idem *im, const char *sbid)
{
    redisReply *r =
        rconn_cmd(req->rc, 0, "SET %s %s:%s PX %lld", im->key, sbid, im->print, IDEM_TTL_MS);

    if (r)
        freeReplyObject(r);
}

static void idem_forget(struct request *req, const struct idem *im)
{
    redisReply *r = im->on ? rconn_cmd(req->rc, 0, "DEL %s", im->key) : NULL;

    if (r)
        freeReplyObject(r);
}

/* Renews (or takes, for a replay) this handler's lease on the create. */
static int hold(struct request *req, const char *sbid, long lease_ms)
{
    char key[128];
    redisReply *r;

    snprintf(key, sizeof(key), K_WAITERS, req->cred.ws);
    r = rconn_cmd(req->rc, 0, "ZADD %s %lld %s", key, (long long)clock_now_ms() + lease_ms, sbid);
    if (r)
        freeReplyObject(r);
    return r ? 0 : -1;
}

static void release(struct request *req, const char *sbid)
{
    char key[128];
    redisReply *r;

    snprintf(key, sizeof(key), K_WAITERS, req->cred.ws);
    r = rconn_cmd(req->rc, 0, "ZREM %s %s", key, sbid);
    if (r)
        freeReplyObject(r);
}

/* The record's state: 1 running, 0 pending, -1 anything else (why says). */
static int record_state(struct request *req, const char *sbid, char *why, size_t whylen)
{
    char key[160];
    redisReply *r;
    int rv;

    snprintf(key, sizeof(key), K_SB, req->cred.ws, sbid);
    r = rconn_cmd(req->rc, 0, "HMGET %s state reason", key);
    if (!r || r->elements != 2 || !r->element[0]->str) {
        snprintf(why, whylen, r ? "the sandbox ended while starting" : "state store unavailable");
        if (r)
            freeReplyObject(r);
        return -1;
    }
    rv = strcmp(r->element[0]->str, "running") == 0   ? 1
         : strcmp(r->element[0]->str, "pending") == 0 ? 0
                                                      : -1;
    if (rv < 0)
        snprintf(why, whylen, "the sandbox ended while starting: %s",
                 r->element[1]->str ? r->element[1]->str : r->element[0]->str);
    freeReplyObject(r);
    return rv;
}

/* Waits for "running" in slices, renewing the lease between them; the record
 * is checked too, since another waiter (a replay) may have taken the wake.
 * 1 running, 0 failed or timed out (why), -1 Redis. */
static int wait_running(struct request *req, const char *sbid, long lease_ms, char *why,
                        size_t whylen)
{
    int64_t deadline = clock_now_ms() + req->conf->create_timeout_ms;
    char key[160];

    snprintf(key, sizeof(key), K_READY, req->cred.ws, sbid);
    for (;;) {
        int64_t left = deadline - clock_now_ms();
        redisReply *r;
        int st;
        if (hold(req, sbid, lease_ms) != 0) {
            snprintf(why, whylen, "state store unavailable");
            return -1;
        }
        if (left <= 0) {
            snprintf(why, whylen, "no worker started the sandbox within %ld ms",
                     req->conf->create_timeout_ms);
            return 0;
        }
        if (left > WAIT_SLICE_MS)
            left = WAIT_SLICE_MS;
        r = rconn_cmd(req->rc, (int)left, "BLPOP %s %.3f", key, (double)left / 1000.0);
        if (!r) {
            snprintf(why, whylen, "state store unavailable");
            return -1;
        }
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
            int ok = strcmp(r->element[1]->str, "running") == 0;
            const char *m = r->element[1]->str;
            snprintf(why, whylen, "%s", strncmp(m, "failed:", 7) == 0 ? m + 7 : m);
            freeReplyObject(r);
            return ok;
        }
        freeReplyObject(r);
        if ((st = record_state(req, sbid, why, whylen)) != 0)
            return st > 0 ? 1 : 0;
    }
}

/* After the wait: nothing half-created survives a failed create. */
static int finish(struct request *req, const char *sbid, const struct idem *im, int state,
                  const char *why)
{
    release(req, sbid);
    if (state == 1)
        return 0;
    sandbox_kill(req->rc, req->cred.ws, sbid, why);
    idem_forget(req, im);
    if (state == 0 && strstr(why, "within"))
        respond_error(req, 504, "%s", why);
    else if (state == 0)
        respond_error(req, 502, "the worker could not start the sandbox: %s", why);
    else
        respond_error(req, 503, "%s", why);
    return -1;
}

/* A replay: the sandbox the first request made, once it runs. */
static int replay(struct request *req, const char *sbid, const struct idem *im)
{
    char why[300];
    int st = record_state(req, sbid, why, sizeof(why));

    if (st == 0)
        st = wait_running(req, sbid, KEYED_LEASE_MS, why, sizeof(why));
    if (st == 1) {
        release(req, sbid);
        return 0;
    }
    if (strstr(why, "unavailable")) {
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
    char why[300];
    int state;

    if (scheduler_create(req->rc, &srv->sched, req->cred.ws, spec, sbid, &err)) {
        idem_forget(req, im);
        respond_error(req, err.status, "%s", err.message);
        return -1;
    }
    if (im->on)
        idem_record(req, im, sbid);
    state = wait_running(req, sbid, im->on ? KEYED_LEASE_MS : WAITER_LEASE_MS, why, sizeof(why));
    return finish(req, sbid, im, state, why);
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
