/* sandbox_record.c: a sandbox's Redis hash as a typed struct sandbox_record
 * (decoded by sandbox_fields.c's table), with the defaults of absent fields
 * in one place (sandbox_store.h), and a workspace's records read in one
 * round trip. */
#include "sandbox_store.h"

#include "sandbox_fields.h"

#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sandbox_record_defaults(struct sandbox_record *r)
{
    memset(r, 0, sizeof(*r));
    r->id = r->ws = r->state_text = r->pool = r->worker = r->runtime = r->tier = "";
    r->require_isolation = r->reason = r->env = r->egress = r->image = r->base_template =
        r->volumes = r->start = r->build = r->build_spec = "";
    r->template_id = SANDBOX_DEFAULT_TEMPLATE;
    r->metadata = "{}";
    r->allowed_domains = "[]";
    r->cpu_cores = SANDBOX_DEFAULT_CPU_CORES;
    r->memory_mb = SANDBOX_DEFAULT_MEMORY_MB;
    r->timeout_s = SANDBOX_DEFAULT_TIMEOUT_S;
    r->secure = SANDBOX_DEFAULT_SECURE;
    r->public_traffic = SANDBOX_DEFAULT_PUBLIC;
    r->internet = -1;
    r->keep_memory = r->paused_memory = 1; /* before decision 0074 every pause kept it */
}

/* The whole hash (HGETALL reply), or NULL when absent (*absent set) or on
 * failure. */
static redisReply *sandbox_get(struct rconn *rc, const char *ws, const char *sbid, int *absent)
{
    char key[160];
    redisReply *r;

    snprintf(key, sizeof(key), K_SB, ws, sbid);
    r = rconn_cmd(rc, 0, "HGETALL %s", key);
    *absent = r && r->elements == 0;
    if (r && r->elements == 0) {
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

int sandbox_read(struct rconn *rc, const char *ws, const char *sbid, struct sandbox_record *r)
{
    int absent;
    redisReply *h = sandbox_get(rc, ws, sbid, &absent);

    sandbox_record_defaults(r);
    if (!h)
        return absent ? 0 : -1;
    sandbox_record_fill(r, h);
    r->owned = h;
    return 1;
}

int sandbox_worker_is(struct rconn *rc, const char *ws, const char *sbid, const char *wid)
{
    char key[160];
    redisReply *r;
    int yes;

    snprintf(key, sizeof(key), K_SB, ws, sbid);
    r = rconn_cmd(rc, 0, "HGET %s %s", key, SANDBOX_FIELD_WORKER);
    if (!r)
        return -1;
    yes = reply_str(r) && strcmp(reply_str(r), wid) == 0;
    freeReplyObject(r);
    return yes;
}

void sandbox_record_free(struct sandbox_record *r)
{
    if (r->owned)
        freeReplyObject(r->owned);
    r->owned = NULL;
}

int sandbox_is_running(const struct sandbox_record *r)
{
    return r->state == SANDBOX_STATE_RUNNING;
}

json_t *sandbox_json_field(const char *text, const char *fallback)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);

    return v ? v : json_loads(fallback, JSON_DECODE_ANY, NULL);
}

/* A list is SMEMBERS then one HGETALL per member: as separate commands that
 * is one round trip per sandbox (1,000 sandboxes, 1,001 trips). One script
 * does it all inside Redis in one. Its record keys are not passed as KEYS (the
 * members are only known inside), which is sound because every one carries
 * the workspace's hash tag, the slot of KEYS[1] (store/keys.h). Filtering by
 * state here also keeps the reply to what the caller lists. */
static struct rscript list_script = {
    "sandbox_list",
    "local out = {}\n"
    "for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n"
    "  local h = redis.call('HGETALL', ARGV[1] .. id)\n"
    "  local keep = #h > 0 and ARGV[2] == ''\n"
    "  for i = 1, #h, 2 do\n"
    "    if h[i] == 'state' then keep = ARGV[2] == '' or h[i + 1] == ARGV[2] end\n"
    "  end\n"
    "  if keep then out[#out + 1] = h end\n"
    "end\n"
    "return out\n",
    ""};

int sandbox_list_read(struct rconn *rc, const char *ws, enum sandbox_state state,
                      struct sandbox_list *out)
{
    char k_sbs[128], prefix[160];
    const char *argv[3] = {k_sbs, prefix, sandbox_state_name(state)}; /* ANY: "" */
    redisReply *r;

    memset(out, 0, sizeof(*out));
    snprintf(k_sbs, sizeof(k_sbs), K_SBS, ws);
    snprintf(prefix, sizeof(prefix), K_SB, ws, "");
    r = rconn_eval(rc, &list_script, 1, 2, argv);
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        if (r)
            freeReplyObject(r);
        return -1;
    }
    out->items = calloc(r->elements + 1, sizeof(*out->items));
    if (!out->items) {
        freeReplyObject(r);
        return -1;
    }
    /* A build's sandbox is the build's, not one of the workspace's sandboxes
     * (docs/templates.md): its template's build status shows it. */
    for (size_t i = 0; i < r->elements; i++) {
        sandbox_record_fill(&out->items[out->n], r->element[i]);
        out->n += !*out->items[out->n].build;
    }
    out->owned = r;
    return 0;
}

void sandbox_list_free(struct sandbox_list *l)
{
    free(l->items);
    if (l->owned)
        freeReplyObject(l->owned);
    memset(l, 0, sizeof(*l));
}

int sandbox_is_paused(const struct sandbox_record *r)
{
    return r->state == SANDBOX_STATE_PAUSED || r->state == SANDBOX_STATE_PAUSING;
}

int sandbox_is_live(const struct sandbox_record *r)
{
    return sandbox_state_is_live(r->state);
}

const char *sandbox_state_shown(const struct sandbox_record *r)
{
    if (r->state != SANDBOX_STATE_UNKNOWN)
        return sandbox_state_name(r->state);
    return r->state_text ? r->state_text : "";
}
