#include "worker_registry.h"

#include "keys.h"
#include "respond.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int worker_check_secret(struct request *req, const char *id, const char *secret, int *alive)
{
    char key[160], mac[SECRET_MAC_HEX];
    const char *stored, *state;
    redisReply *r;
    int ok;

    snprintf(key, sizeof(key), K_WORKER, req->cred.ws, id);
    r = rconn_cmd(req->rc, 0, "HMGET %s secret_mac state", key);
    if (!r)
        return -1;
    secret_mac_hex(req->conf->server_secret, secret, mac);
    stored = reply_str(r->element[0]);
    state = reply_str(r->element[1]);
    ok = stored && secret_equal(stored, mac);
    *alive = ok && state && strcmp(state, "alive") == 0;
    freeReplyObject(r);
    return ok;
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
    if (!ok)
        respond_error(req, 403,
                      "this join token did not enroll that worker, or its secret is wrong");
    else if (!alive)
        respond_error(req, 410, "worker %s is no longer enrolled: handshake again", id);
    else
        snprintf(wid, 33, "%s", id);
    return ok && alive;
}

/* What placement may still give this worker: its totals less what the
 * sandboxes placed on it hold (the used, cpu_used, mem_used counters). */
static void worker_view_free(json_t *v, const redisReply *rec)
{
    const char *u = reply_hget(rec, "used"), *cu = reply_hget(rec, "cpu_used"),
               *mu = reply_hget(rec, "mem_used"), *s = reply_hget(rec, "slots"),
               *c = reply_hget(rec, "cpu"), *m = reply_hget(rec, "mem");
    long long fs = (s ? atoll(s) : 0) - (u ? atoll(u) : 0);
    long long fm = (m ? atoll(m) : 0) - (mu ? atoll(mu) : 0);
    double fc = (c ? atof(c) : 0) - (cu ? atof(cu) : 0);

    json_object_set_new(v, "free_slots", json_integer(fs > 0 ? fs : 0));
    json_object_set_new(v, "free_cpu_cores",
                        json_real(fc > 0 ? (double)(long long)(fc * 1000 + 0.5) / 1000 : 0));
    json_object_set_new(v, "free_memory_mb", json_integer(fm > 0 ? fm : 0));
}

json_t *worker_view(const redisReply *rec, const char *wid)
{
    const char *rt = reply_hget(rec, "runtimes_json"), *tm = reply_hget(rec, "templates_json");
    const char *lease = reply_hget(rec, "lease_until");
    json_t *runtimes = json_loads(rt ? rt : "[]", 0, NULL);
    json_t *templates = json_loads(tm ? tm : "[]", 0, NULL);

    json_t *v;

#define FIELD(name) (reply_hget(rec, name) ? reply_hget(rec, name) : "")
    v = json_pack("{s:s, s:s, s:s, s:o, s:o, s:b, s:I, s:I, s:f, s:I, s:s, s:I}", "worker_id", wid,
                  "hostname", FIELD("hostname"), "state", FIELD("state"), "runtimes",
                  runtimes ? runtimes : json_array(), "templates",
                  templates ? templates : json_array(), "egress", strcmp(FIELD("egress"), "1") == 0,
                  "slots", (json_int_t)atoll(FIELD("slots")), "used_slots",
                  (json_int_t)atoll(FIELD("used")), "cpu_cores", atof(FIELD("cpu")), "memory_mb",
                  (json_int_t)atoll(FIELD("mem")), "data_addr", FIELD("data_addr"),
                  "lease_until_ms", (json_int_t)(lease ? atoll(lease) : 0));
    worker_view_free(v, rec);
    /* What the worker last said stops it taking sandboxes; "" when healthy. */
    json_object_set_new(v, "healthy", json_boolean(FIELD("problem")[0] == '\0'));
    json_object_set_new(v, "problem", json_string(FIELD("problem")));
#undef FIELD
    return v;
}
