/* sandbox_record.c: a sandbox's Redis hash as a typed struct sandbox_record,
 * with the defaults of absent fields in one place (sandbox_store.h), and a
 * workspace's records read in one round trip. */
#include "sandbox_store.h"

#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sandbox_record_defaults(struct sandbox_record *r)
{
    memset(r, 0, sizeof(*r));
    r->id = r->ws = r->state = r->pool = r->worker = r->runtime = r->tier = "";
    r->require_isolation = r->reason = r->env = r->egress = r->image = r->base_template =
        r->volumes = "";
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

/* A field's text, or the default when the record lacks it (or has it empty). */
static void text(const redisReply *h, const char *field, const char **out)
{
    const char *v = reply_hget(h, field);

    if (v && *v)
        *out = v;
}

static void number(const redisReply *h, const char *field, long long *out)
{
    const char *v = reply_hget(h, field);

    if (v && *v)
        *out = atoll(v);
}

static void flag(const redisReply *h, const char *field, int *out)
{
    const char *v = reply_hget(h, field);

    if (v && *v)
        *out = strcmp(v, "1") == 0;
}

static void numbers(struct sandbox_record *r, const redisReply *h)
{
    long long mem = r->memory_mb, timeout = r->timeout_s, pids = 0, disk = 0;
    const char *cpu = reply_hget(h, "cpu_cores");

    if (cpu && *cpu)
        r->cpu_cores = atof(cpu);
    number(h, "memory_mb", &mem);
    number(h, "timeout", &timeout);
    number(h, "pids_limit", &pids);
    number(h, "disk_mb", &disk);
    number(h, "created_at", &r->created_at);
    number(h, "started_at", &r->started_at);
    number(h, "expires_at", &r->expires_at);
    r->memory_mb = (long)mem;
    r->timeout_s = (long)timeout;
    r->pids_limit = (long)pids;
    r->disk_mb = (long)disk;
}

void sandbox_record_fill(struct sandbox_record *r, const redisReply *h)
{
    static const struct {
        const char *field;
        size_t offset;
    } texts[] = {
        {"id", offsetof(struct sandbox_record, id)},
        {"ws", offsetof(struct sandbox_record, ws)},
        {"template", offsetof(struct sandbox_record, template_id)},
        {"state", offsetof(struct sandbox_record, state)},
        {"pool", offsetof(struct sandbox_record, pool)},
        {"worker", offsetof(struct sandbox_record, worker)},
        {"runtime", offsetof(struct sandbox_record, runtime)},
        {"tier", offsetof(struct sandbox_record, tier)},
        {"require_isolation", offsetof(struct sandbox_record, require_isolation)},
        {"reason", offsetof(struct sandbox_record, reason)},
        {"metadata", offsetof(struct sandbox_record, metadata)},
        {"allowed_domains", offsetof(struct sandbox_record, allowed_domains)},
        {"env", offsetof(struct sandbox_record, env)},
        {"egress", offsetof(struct sandbox_record, egress)},
        {"image", offsetof(struct sandbox_record, image)},
        {"base_template", offsetof(struct sandbox_record, base_template)},
        {"volumes", offsetof(struct sandbox_record, volumes)},
    };
    const char *internet = reply_hget(h, "internet");

    sandbox_record_defaults(r);
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        text(h, texts[i].field, (const char **)((char *)r + texts[i].offset));
    /* Present but empty is not absent here: it is how "none" was recorded. */
    r->egress_next = reply_hget(h, "egress_next");
    numbers(r, h);
    flag(h, "secure", &r->secure);
    flag(h, "public", &r->public_traffic);
    flag(h, "egress_policy", &r->egress_policy);
    flag(h, "auto_resume", &r->auto_resume);
    flag(h, "keep_memory", &r->keep_memory);
    flag(h, "paused_memory", &r->paused_memory);
    r->pause_on_timeout =
        reply_hget(h, "on_timeout") && strcmp(reply_hget(h, "on_timeout"), "pause") == 0;
    if (internet && *internet)
        r->internet = strcmp(internet, "1") == 0;
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
    r = rconn_cmd(rc, 0, "HGET %s worker", key);
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
    return strcmp(r->state, "running") == 0;
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

int sandbox_list_read(struct rconn *rc, const char *ws, const char *state, struct sandbox_list *out)
{
    char k_sbs[128], prefix[160];
    const char *argv[3] = {k_sbs, prefix, state ? state : ""};
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
    for (size_t i = 0; i < r->elements; i++)
        sandbox_record_fill(&out->items[out->n++], r->element[i]);
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
    return strcmp(r->state, "paused") == 0 || strcmp(r->state, "pausing") == 0;
}

int sandbox_state_live(const char *state)
{
    return strcmp(state, "running") == 0 || strcmp(state, "pausing") == 0 ||
           strcmp(state, "paused") == 0 || strcmp(state, "resuming") == 0;
}

int sandbox_is_live(const struct sandbox_record *r)
{
    return sandbox_state_live(r->state);
}
