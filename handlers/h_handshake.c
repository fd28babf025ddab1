/* POST /v1/worker/handshake: a worker enrols (or re-enrols after a restart)
 * with its capabilities. Its pool is the join token's workspace, never a field
 * of the body. */
#include "clock.h"
#include "commands.h"
#include "data_addr.h"
#include "handlers.h"
#include "log.h"
#include "respond.h"
#include "sandbox_spec_parse.h"
#include "secret.h"
#include "worker_registry.h"
#include "worker_store.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

struct caps {
    char runtimes[512];   /* "runc:1,runsc:2," for the placement script */
    char templates[1100]; /* ",base,other," */
    json_t *runtimes_json, *templates_json;
    int egress, public_ok;
    double cpu;
    long mem, slots;
    char data_addr[DATA_ADDR_CANON]; /* canonical, one the operator listed */
    const char *hostname;
};

static int parse_runtimes(const json_t *v, struct caps *c, char *err, size_t errlen)
{
    size_t i, used = 0;
    json_t *rt;

    if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > 16) {
        snprintf(err, errlen, "runtimes: must be an array of 1-16 {name, tier}");
        return -1;
    }
    json_array_foreach(v, i, rt)
    {
        const char *name = json_string_value(json_object_get(rt, "name"));
        enum tier t;
        if (!name || !valid_name(name, 24) ||
            tier_parse(json_string_value(json_object_get(rt, "tier")), &t) != 0) {
            snprintf(err, errlen,
                     "runtimes[%zu]: needs a name of 1-24 characters [a-z0-9._-] and a tier (NONE, "
                     "CONTAINER, GVISOR, MICROVM, UNKNOWN)",
                     i);
            return -1;
        }
        used += (size_t)snprintf(c->runtimes + used, sizeof(c->runtimes) - used, "%s:%d,", name,
                                 (int)t);
    }
    c->runtimes_json = (json_t *)v;
    return 0;
}

static int parse_templates(const json_t *v, struct caps *c, char *err, size_t errlen)
{
    size_t i, used = 1;
    json_t *t;

    if (!json_is_array(v) || json_array_size(v) > 16) {
        snprintf(err, errlen, "templates: must be an array of at most 16 names");
        return -1;
    }
    c->templates[0] = ',';
    c->templates[1] = '\0';
    json_array_foreach(v, i, t)
    {
        if (!json_is_string(t) || !valid_name(json_string_value(t), 64)) {
            snprintf(err, errlen, "templates[%zu]: must be a name [a-z0-9._-]", i);
            return -1;
        }
        used += (size_t)snprintf(c->templates + used, sizeof(c->templates) - used, "%s,",
                                 json_string_value(t));
    }
    c->templates_json = (json_t *)v;
    return 0;
}

/* The gateway will connect to data_addr for every request to this worker's
 * sandboxes: only an IP literal and port the operator listed (decision 32),
 * and on loopback only one listed exactly (decision 61), or a join token would
 * turn the gateway into a proxy to its own host's services. */
static int parse_data_addr(const json_t *v, const struct data_addr_allow *allow, struct caps *c,
                           char *err, size_t errlen)
{
    const char *s = json_string_value(v);
    char why[192];

    if (!s) {
        snprintf(err, errlen, "data_addr: must be a string, IP:port");
        return -1;
    }
    if (data_addr_check(allow, s, strlen(s), c->data_addr, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "data_addr: %s", why);
        return -1;
    }
    return 0;
}

/* Whether the worker lets its sandboxes be public (decision 0062): an agent,
 * a person's machine, only when it says so; any other worker unless it says
 * not. */
static int parse_public(const json_t *b, struct caps *c, char *err, size_t errlen)
{
    const json_t *v = json_object_get(b, "public_traffic");
    const char *mode = json_string_value(json_object_get(b, "mode"));

    if (v && !json_is_boolean(v)) {
        snprintf(err, errlen, "public_traffic: must be true or false");
        return -1;
    }
    c->public_ok = v ? json_is_true(v) : !(mode && strcmp(mode, "agent") == 0);
    return 0;
}

static int parse_caps(const json_t *b, const struct data_addr_allow *allow, struct caps *c,
                      char *err, size_t errlen)
{
    const json_t *v;

    memset(c, 0, sizeof(*c));
    if (parse_runtimes(json_object_get(b, "runtimes"), c, err, errlen) ||
        parse_templates(json_object_get(b, "templates"), c, err, errlen))
        return -1;
    v = json_object_get(b, "egress");
    if (v && !json_is_boolean(v)) {
        snprintf(err, errlen, "egress: must be true or false");
        return -1;
    }
    c->egress = json_is_true(v);
    if (parse_public(b, c, err, errlen) != 0)
        return -1;
    v = json_object_get(b, "cpu_cores");
    c->cpu = json_number_value(v);
    if (!json_is_number(v) || !isfinite(c->cpu) || c->cpu <= 0 || c->cpu > 100000) {
        snprintf(err, errlen, "cpu_cores: must be a positive number");
        return -1;
    }
    v = json_object_get(b, "memory_mb");
    c->mem = (long)json_integer_value(v);
    if (!json_is_integer(v) || c->mem <= 0) {
        snprintf(err, errlen, "memory_mb: must be a positive integer");
        return -1;
    }
    v = json_object_get(b, "slots");
    c->slots = (long)json_integer_value(v);
    if (!json_is_integer(v) || c->slots < 1 || c->slots > 100000) {
        snprintf(err, errlen, "slots: must be an integer in [1, 100000]");
        return -1;
    }
    if (parse_data_addr(json_object_get(b, "data_addr"), allow, c, err, errlen) != 0)
        return -1;
    c->hostname = json_string_value(json_object_get(b, "hostname"));
    if (!c->hostname || strlen(c->hostname) > 255)
        c->hostname = "";
    return 0;
}

/* The worker_id a returning worker may keep: same pool, right secret, not
 * deleted. 1 reuse (dead: reset its usage), 0 new id, -1 refused (answered). */
static int returning_worker(struct request *req, const json_t *b, char wid[33], int *was_dead)
{
    const char *id = json_string_value(json_object_get(b, "worker_id"));
    const char *secret = json_string_value(json_object_get(b, "worker_secret"));
    int ok, alive = 0;

    if (!id)
        return 0;
    if (!secret || !token_is_id(id)) {
        respond_error(req, 403, "worker_id needs the worker_secret it was given");
        return -1;
    }
    ok = worker_check_secret(req, id, secret, &alive);
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
    snprintf(wid, 33, "%s", id);
    return 1;
}

/* The command stream first: once the record says alive, creates may be sent
 * to it. The record itself is written at once (worker_enrol). */
static int store_worker(struct request *req, const char *wid, const struct caps *c, const char *mac,
                        const char *data_key, int reset_usage, char *prev_key, size_t prev_len)
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

/* An agent-mode worker is a person's own machine (decision 0054): enrolled
 * only into a workspace's pool, so that no other tenant's sandbox can ever
 * be placed on it. 1 when refused (answered), nothing registered. */
static int agent_unscoped(struct request *req, const json_t *body)
{
    const json_t *mode = json_object_get(body, "mode");

    if (mode && (!json_is_string(mode) || (strcmp(json_string_value(mode), "agent") != 0 &&
                                           strcmp(json_string_value(mode), "docker") != 0))) {
        respond_error(req, 400, "mode: must be \"docker\" or \"agent\"");
        return 1;
    }
    if (!mode || strcmp(json_string_value(mode), "agent") != 0 || req->cred.ws[0])
        return 0;
    respond_error(req, 403,
                  "an agent-mode worker needs a workspace-scoped join token; this one enrols "
                  "into the shared fleet, where other workspaces' sandboxes would be placed on "
                  "this machine");
    return 1;
}

void h_worker_handshake(struct request *req)
{
    json_t *body = request_json_body(req);
    char wid[33], secret[TOKEN_SECRET_MAX], mac[SECRET_MAC_HEX], err[256], data_key[65];
    char prev_key[65] = "";
    struct caps caps;
    int again, was_dead = 0;

    if (!body)
        return;
    if (agent_unscoped(req, body)) {
        json_decref(body);
        return;
    }
    if (parse_caps(body, &req->conf->data_allow, &caps, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        json_decref(body);
        return;
    }
    again = returning_worker(req, body, wid, &was_dead);
    if (again < 0) {
        json_decref(body);
        return;
    }
    if (again)
        snprintf(secret, sizeof(secret), "%s",
                 json_string_value(json_object_get(body, "worker_secret")));
    /* The data key signs gateway requests to this worker: new at every handshake. */
    if ((!again && (secret_random_hex(wid, 8) || secret_random_hex(secret, 24))) ||
        secret_random_hex(data_key, 32)) {
        respond_error(req, 500, "no randomness");
        json_decref(body);
        return;
    }
    secret_mac_hex(req->conf->server_secret, secret, mac);
    log_ctx_set(LOG_WORKER, wid);
    if (store_worker(req, wid, &caps, mac, data_key, !again || was_dead, prev_key,
                     sizeof(prev_key)) != 0) {
        respond_store_down(req);
    } else {
        audit_enrolment(req, wid, again, was_dead);
        log_info("enrolled (%s worker, %ld slots, data %s)",
                 !again     ? "new"
                 : was_dead ? "returning dead"
                            : "returning",
                 caps.slots, caps.data_addr);
        respond_json(req, 200, handshake_answer(req, wid, secret, data_key, prev_key));
    }
    json_decref(body);
}
