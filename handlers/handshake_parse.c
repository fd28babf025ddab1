/* The body of POST /v1/worker/handshake (handshake_parse.h). */
#include "handshake_parse.h"
#include "sandbox_spec_parse.h"
#include "tier.h"
#include "token.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int parse_runtimes(const json_t *v, struct handshake_body *c, char *err, size_t errlen)
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
    c->runtimes_json = v;
    return 0;
}

static int parse_templates(const json_t *v, struct handshake_body *c, char *err, size_t errlen)
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
    c->templates_json = v;
    return 0;
}

/* The gateway will connect to data_addr for every request to this worker's
 * sandboxes: only an IP literal and port the operator listed (decision 32),
 * and on loopback only one listed exactly (decision 61), or a join token would
 * turn the gateway into a proxy to its own host's services. */
static int parse_data_addr(const json_t *v, const struct data_addr_allow *allow,
                           struct handshake_body *c, char *err, size_t errlen)
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

/* How the gateway reaches the worker: its data_addr, or its tunnel (decision
 * 0087: the worker dials out, nothing connects to it), never both. */
static int parse_reach(const json_t *b, const struct data_addr_allow *allow,
                       struct handshake_body *c, char *err, size_t errlen)
{
    const json_t *t = json_object_get(b, "tunnel");

    if (t && !json_is_boolean(t)) {
        snprintf(err, errlen, "tunnel: must be true or false");
        return -1;
    }
    c->tunnel = json_is_true(t);
    if (!c->tunnel)
        return parse_data_addr(json_object_get(b, "data_addr"), allow, c, err, errlen);
    if (json_object_get(b, "data_addr")) {
        snprintf(err, errlen, "data_addr: a tunnelled worker has none (tunnel is true)");
        return -1;
    }
    snprintf(c->data_addr, sizeof(c->data_addr), "%s", TUNNEL_DATA_ADDR);
    return 0;
}

/* Whether the worker lets its sandboxes be public (decision 0062): an agent,
 * a person's machine, only when it says so; any other worker unless it says
 * not. */
static int parse_public(const json_t *b, struct handshake_body *c, char *err, size_t errlen)
{
    const json_t *v = json_object_get(b, "public_traffic");

    if (v && !json_is_boolean(v)) {
        snprintf(err, errlen, "public_traffic: must be true or false");
        return -1;
    }
    c->public_ok = v ? json_is_true(v) : !c->agent;
    return 0;
}

static int parse_caps(const json_t *b, const struct data_addr_allow *allow,
                      struct handshake_body *c, char *err, size_t errlen)
{
    const json_t *v;

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
    if (parse_reach(b, allow, c, err, errlen) != 0)
        return -1;
    c->hostname = json_string_value(json_object_get(b, "hostname"));
    if (!c->hostname || strlen(c->hostname) > 255)
        c->hostname = "";
    return 0;
}

/* An agent-mode worker is a person's own machine (decision 0054): enrolled
 * only into a workspace's pool, so that no other tenant's sandbox can ever be
 * placed on it. */
static int parse_mode(const json_t *b, int scoped, struct handshake_body *c, char *err,
                      size_t errlen)
{
    const json_t *mode = json_object_get(b, "mode");

    if (mode && (!json_is_string(mode) || (strcmp(json_string_value(mode), "agent") != 0 &&
                                           strcmp(json_string_value(mode), "docker") != 0))) {
        snprintf(err, errlen, "mode: must be \"docker\" or \"agent\"");
        return 400;
    }
    c->agent = mode && strcmp(json_string_value(mode), "agent") == 0;
    if (!c->agent || scoped)
        return 0;
    snprintf(err, errlen,
             "an agent-mode worker needs a workspace-scoped join token; this one enrols "
             "into the shared fleet, where other workspaces' sandboxes would be placed on "
             "this machine");
    return 403;
}

/* A returning worker names itself with the secret it was given. */
static int parse_returning(const json_t *b, struct handshake_body *c, char *err, size_t errlen)
{
    c->worker_id = json_string_value(json_object_get(b, "worker_id"));
    c->worker_secret = json_string_value(json_object_get(b, "worker_secret"));
    if (c->worker_id && (!c->worker_secret || !token_is_id(c->worker_id))) {
        snprintf(err, errlen, "worker_id needs the worker_secret it was given");
        return 403;
    }
    return 0;
}

int handshake_parse(const json_t *body, const struct data_addr_allow *allow, int scoped,
                    struct handshake_body *hb, char *err, size_t errlen)
{
    int st;

    memset(hb, 0, sizeof(*hb));
    st = parse_mode(body, scoped, hb, err, errlen);
    if (st != 0)
        return st;
    if (parse_caps(body, allow, hb, err, errlen) != 0)
        return 400;
    return parse_returning(body, hb, err, errlen);
}
