#include "e2b_view.h"

#include "e2b_spec.h"
#include "sandbox_token.h"
#include "sandbox_view.h"

#include <string.h>

static void add_tokens(json_t *o, const struct sandbox_record *r, const struct corral_conf *conf)
{
    char token[SECRET_MAC_HEX];

    if (r->secure) {
        sandbox_token(conf->gateway_secret, SANDBOX_TOKEN_ENVD, r->id, token);
        json_object_set_new(o, "envdAccessToken", json_string(token));
    }
    if (!r->public_traffic) {
        sandbox_token(conf->gateway_secret, SANDBOX_TOKEN_TRAFFIC, r->id, token);
        json_object_set_new(o, "trafficAccessToken", json_string(token));
    }
}

static json_t *base(const struct sandbox_record *r)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "sandboxID", r->id, "templateID", r->template_id,
                     "alias", r->template_id, "clientID", "corral", "envdVersion",
                     E2B_ENVD_VERSION);
}

static void add_detail(json_t *o, const struct sandbox_record *r)
{
    json_object_set_new(o, "startedAt", format_time_json(r->started_at));
    json_object_set_new(o, "endAt", format_time_json(r->expires_at));
    json_object_set_new(o, "cpuCount", json_integer((json_int_t)(r->cpu_cores + 0.999)));
    json_object_set_new(o, "memoryMB", json_integer(r->memory_mb));
    json_object_set_new(o, "diskSizeMB", json_integer(0));
    json_object_set_new(o, "metadata", sandbox_json_field(r->metadata, "{}"));
    json_object_set_new(o, "state", json_string(sandbox_is_paused(r) ? "paused" : "running"));
    json_object_set_new(o, "lifecycle",
                        json_pack("{s:s, s:b}", "onTimeout", r->pause_on_timeout ? "pause" : "kill",
                                  "autoResume", r->auto_resume));
}

/* SandboxDetail's volumeMounts [{name, path}] from the record's mounts. */
static void add_mounts(json_t *o, const struct sandbox_record *r)
{
    json_t *mounts = sandbox_json_field(r->volumes, "[]"), *m, *out = json_array();
    size_t i;

    json_array_foreach(mounts, i, m)
    {
        json_array_append_new(out, json_pack("{s:O, s:O}", "name", json_object_get(m, "name"),
                                             "path", json_object_get(m, "path")));
    }
    json_decref(mounts);
    json_object_set_new(o, "volumeMounts", out);
}

/* The policy's rules in E2B's shape, {host: [{"transform": {"headers"}}]},
 * their values masked already (sandbox_egress_json). */
static void add_rules(json_t *net, const json_t *rules)
{
    json_t *out, *list, *rule;
    const char *host;
    size_t i;

    if (!json_is_object(rules))
        return;
    out = json_object();
    json_object_foreach((json_t *)rules, host, list)
    {
        json_t *l = json_array();
        json_array_foreach(list, i, rule)
        {
            json_array_append_new(l, json_pack("{s:{s:O}}", "transform", "headers",
                                               json_object_get(rule, "headers")));
        }
        json_object_set_new(out, host, l);
    }
    json_object_set_new(net, "rules", out);
}

/* SandboxDetail's allowInternetAccess (null: not given) and network, with the
 * allow and deny lists of the policy in force (not one recorded for the next
 * start: Corral applies a network update when the sandbox is next created). */
static void add_network(json_t *o, const struct sandbox_record *r)
{
    json_t *policy = sandbox_egress_json(r->egress);
    json_t *net = json_pack("{s:b}", "allowPublicTraffic", r->public_traffic);

    json_object_set_new(o, "allowInternetAccess",
                        r->internet < 0 ? json_null() : json_boolean(r->internet));
    if (json_is_object(policy)) {
        json_object_set(net, "allowOut", json_object_get(policy, "allow"));
        json_object_set(net, "denyOut", json_object_get(policy, "deny"));
        add_rules(net, json_object_get(policy, "rules"));
        if (json_object_get(policy, "upstream"))
            json_object_set(net, "egressProxy", json_object_get(policy, "upstream"));
    }
    if (r->mask_host && *r->mask_host)
        json_object_set_new(net, "maskRequestHost", json_string(r->mask_host));
    json_decref(policy);
    json_object_set_new(o, "network", net);
}

json_t *e2b_view(const struct sandbox_record *r, enum e2b_shape shape,
                 const struct corral_conf *conf)
{
    json_t *o = base(r);

    if (shape != E2B_LISTED)
        json_object_set_new(o, "domain", conf->domain[0] ? json_string(conf->domain) : json_null());
    if (shape == E2B_SANDBOX) {
        add_tokens(o, r, conf);
        return o;
    }
    add_detail(o, r);
    if (shape == E2B_DETAIL) {
        add_tokens(o, r, conf);
        json_object_del(o, "trafficAccessToken");
        add_network(o, r);
        add_mounts(o, r);
    }
    return o;
}
