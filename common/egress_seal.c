#include "egress_seal.h"

#include "env_seal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Applies fn to every secret slot of policy: each header value of each rule,
 * and the upstream's password. Stops at the first failure. */
typedef int (*slot_fn)(json_t *parent, const char *key, json_t *value, void *ctx);

static int each_secret(json_t *policy, slot_fn fn, void *ctx)
{
    json_t *rules = json_object_get(policy, "rules"), *up = json_object_get(policy, "upstream");
    json_t *list, *rule, *v;
    const char *host, *name;
    void *tmp;
    size_t i;

    json_object_foreach(rules, host, list)
    {
        json_array_foreach(list, i, rule)
        {
            json_t *headers = json_object_get(rule, "headers");
            json_object_foreach_safe(headers, tmp, name, v)
            {
                if (fn(headers, name, v, ctx) != 0)
                    return -1;
            }
        }
    }
    if ((v = json_object_get(up, "password")))
        return fn(up, "password", v, ctx);
    return 0;
}

struct seal_ctx {
    const char *secret;
    char ad[96];
};

static int seal_one(json_t *parent, const char *key, json_t *value, void *ctx)
{
    const struct seal_ctx *c = ctx;
    char *sealed;

    if (!json_is_string(value))
        return json_is_object(value) ? 0 : -1; /* sealed already */
    sealed = env_seal(c->secret, c->ad, json_string_value(value));
    if (!sealed)
        return -1;
    json_object_set_new(parent, key, json_pack("{s:s}", "sealed", sealed));
    free(sealed);
    return 0;
}

static int open_one(json_t *parent, const char *key, json_t *value, void *ctx)
{
    const struct seal_ctx *c = ctx;
    const char *sealed = json_string_value(json_object_get(value, "sealed"));
    char *plain;

    if (json_is_string(value))
        return 0; /* never sealed: a policy stored before sealing existed */
    plain = sealed ? env_open(c->secret, c->ad, sealed) : NULL;
    if (!plain)
        return -1;
    json_object_set_new(parent, key, json_string(plain));
    free(plain);
    return 0;
}

static int mask_one(json_t *parent, const char *key, json_t *value, void *ctx)
{
    (void)value;
    (void)ctx;
    if (strcmp(key, "password") == 0 && json_object_get(parent, "address"))
        json_object_del(parent, key);
    else
        json_object_set_new(parent, key, json_string("***"));
    return 0;
}

static void ctx_init(struct seal_ctx *c, const char *secret, const char *ws)
{
    c->secret = secret;
    snprintf(c->ad, sizeof(c->ad), "egress/%s", ws);
}

int egress_seal(const char *server_secret, const char *ws, json_t *policy)
{
    struct seal_ctx c;

    ctx_init(&c, server_secret, ws);
    return each_secret(policy, seal_one, &c);
}

int egress_open(const char *server_secret, const char *ws, json_t *policy)
{
    struct seal_ctx c;

    ctx_init(&c, server_secret, ws);
    return each_secret(policy, open_one, &c);
}

void egress_mask(json_t *policy)
{
    each_secret(policy, mask_one, NULL);
}

char *egress_seal_text(const char *server_secret, const char *ws, const char *text)
{
    json_t *p;
    char *out = NULL;

    if (!text)
        return NULL;
    p = json_loads(text, 0, NULL);
    if (json_is_object(p) && egress_seal(server_secret, ws, p) == 0)
        out = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    return out;
}
