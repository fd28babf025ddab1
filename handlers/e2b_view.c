#include "e2b_view.h"

#include "e2b_spec.h"
#include "sandbox_token.h"
#include "sandbox_view.h"

#include <stdlib.h>
#include <string.h>

static const char *field(const redisReply *rec, const char *name, const char *dflt)
{
    const char *v = reply_hget(rec, name);
    return v && *v ? v : dflt;
}

static json_t *time_or_now(const redisReply *rec, const char *name)
{
    char text[40];
    const char *v = reply_hget(rec, name);

    format_time_ms(v && *v ? atoll(v) : 0, text, sizeof(text));
    return json_string(text);
}

static void add_tokens(json_t *o, const redisReply *rec, const struct corral_conf *conf)
{
    char token[SECRET_MAC_HEX];
    const char *id = field(rec, "id", "");

    if (strcmp(field(rec, "secure", "0"), "1") == 0) {
        sandbox_token(conf->gateway_secret, SANDBOX_TOKEN_ENVD, id, token);
        json_object_set_new(o, "envdAccessToken", json_string(token));
    }
    if (strcmp(field(rec, "public", "1"), "0") == 0) {
        sandbox_token(conf->gateway_secret, SANDBOX_TOKEN_TRAFFIC, id, token);
        json_object_set_new(o, "trafficAccessToken", json_string(token));
    }
}

static json_t *base(const redisReply *rec)
{
    const char *tmpl = field(rec, "template", "");

    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "sandboxID", field(rec, "id", ""), "templateID",
                     tmpl, "alias", tmpl, "clientID", "corral", "envdVersion", E2B_ENVD_VERSION);
}

static void add_detail(json_t *o, const redisReply *rec)
{
    const char *meta = reply_hget(rec, "metadata");
    json_t *m = json_loads(meta ? meta : "{}", 0, NULL);

    json_object_set_new(o, "startedAt", time_or_now(rec, "started_at"));
    json_object_set_new(o, "endAt", time_or_now(rec, "expires_at"));
    json_object_set_new(o, "cpuCount",
                        json_integer((json_int_t)(atof(field(rec, "cpu_cores", "1")) + 0.999)));
    json_object_set_new(o, "memoryMB", json_integer(atoll(field(rec, "memory_mb", "512"))));
    json_object_set_new(o, "diskSizeMB", json_integer(0));
    json_object_set_new(o, "metadata", m ? m : json_object());
    json_object_set_new(o, "state", json_string("running"));
}

/* SandboxDetail's allowInternetAccess (null: not given) and network, with the
 * allow and deny lists of the policy in force (not one recorded for the next
 * start: Corral applies a network update when the sandbox is next created). */
static void add_network(json_t *o, const redisReply *rec)
{
    const char *internet = field(rec, "internet", "");
    json_t *policy = sandbox_egress_field(rec, "egress");
    json_t *net =
        json_pack("{s:b}", "allowPublicTraffic", strcmp(field(rec, "public", "1"), "0") != 0);

    json_object_set_new(o, "allowInternetAccess",
                        *internet ? json_boolean(strcmp(internet, "1") == 0) : json_null());
    if (json_is_object(policy)) {
        json_object_set(net, "allowOut", json_object_get(policy, "allow"));
        json_object_set(net, "denyOut", json_object_get(policy, "deny"));
    }
    json_decref(policy);
    json_object_set_new(o, "network", net);
}

json_t *e2b_view(const redisReply *rec, enum e2b_shape shape, const struct corral_conf *conf)
{
    json_t *o = base(rec);

    if (shape != E2B_LISTED)
        json_object_set_new(o, "domain", conf->domain[0] ? json_string(conf->domain) : json_null());
    if (shape == E2B_SANDBOX) {
        add_tokens(o, rec, conf);
        return o;
    }
    add_detail(o, rec);
    if (shape == E2B_DETAIL) {
        add_tokens(o, rec, conf);
        json_object_del(o, "trafficAccessToken");
        add_network(o, rec);
        json_object_set_new(o, "lifecycle",
                            json_pack("{s:s, s:b}", "onTimeout", "kill", "autoResume", 0));
    }
    return o;
}
