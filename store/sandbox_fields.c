/* sandbox_fields.c: the sandbox record's field table, and the two directions
 * through it: a hash (HGETALL reply) into a struct sandbox_record, and a
 * record into the field/value pairs a create writes. A create's fields come
 * first, in the order it has always written them (HSET keeps that order, so
 * a hash is laid out as before). */
#include "sandbox_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT(member) offsetof(struct sandbox_record, member)
#define TEXT(name, member)                                                                         \
    {                                                                                              \
        name, AT(member), SANDBOX_FIELD_TEXT, NULL, NULL, 1                                        \
    }
#define NUMBER(name, member, kind)                                                                 \
    {                                                                                              \
        name, AT(member), kind, NULL, NULL, 1                                                      \
    }
#define FLAG(name, member, yes, no)                                                                \
    {                                                                                              \
        name, AT(member), SANDBOX_FIELD_FLAG, yes, no, 1                                           \
    }

const struct sandbox_field sandbox_fields[] = {
    TEXT("id", id),
    TEXT("ws", ws),
    TEXT("template", template_id),
    {"state", AT(state), SANDBOX_FIELD_STATE, NULL, NULL, 1},
    TEXT("pool", pool),
    TEXT(SANDBOX_FIELD_WORKER, worker),
    TEXT("runtime", runtime),
    TEXT("tier", tier),
    TEXT("require_isolation", require_isolation),
    NUMBER("timeout", timeout_s, SANDBOX_FIELD_LONG),
    NUMBER("cpu_cores", cpu_cores, SANDBOX_FIELD_REAL),
    NUMBER("memory_mb", memory_mb, SANDBOX_FIELD_LONG),
    TEXT("metadata", metadata),
    TEXT("env", env),
    TEXT("allowed_domains", allowed_domains),
    NUMBER("created_at", created_at, SANDBOX_FIELD_MILLIS),
    FLAG("egress_policy", egress_policy, "1", "0"),
    FLAG("secure", secure, "1", "0"),
    FLAG("public", public_traffic, "1", "0"),
    TEXT("egress", egress),
    {"internet", AT(internet), SANDBOX_FIELD_TRISTATE, "1", "0", 1},
    NUMBER("pids_limit", pids_limit, SANDBOX_FIELD_LONG),
    NUMBER("disk_mb", disk_mb, SANDBOX_FIELD_LONG),
    FLAG("on_timeout", pause_on_timeout, "pause", "kill"),
    FLAG("auto_resume", auto_resume, "1", "0"),
    FLAG("keep_memory", keep_memory, "1", "0"),
    TEXT("image", image),
    TEXT("base_template", base_template),
    TEXT("volumes", volumes),
    TEXT("start", start),
    TEXT("build", build),
    TEXT("build_spec", build_spec),
    TEXT("mask_host", mask_host),
    /* Written by the transitions (sandbox_store.c, sandbox_pause.c), never
     * by a create. */
    {"reason", AT(reason), SANDBOX_FIELD_TEXT, NULL, NULL, 0},
    {"egress_next", AT(egress_next), SANDBOX_FIELD_TEXT_OR_NULL, NULL, NULL, 0},
    {"started_at", AT(started_at), SANDBOX_FIELD_MILLIS, NULL, NULL, 0},
    {"expires_at", AT(expires_at), SANDBOX_FIELD_MILLIS, NULL, NULL, 0},
    {"paused_memory", AT(paused_memory), SANDBOX_FIELD_FLAG, "1", "0", 0},
};

const size_t sandbox_nfields = sizeof(sandbox_fields) / sizeof(sandbox_fields[0]);

_Static_assert(sizeof(sandbox_fields) / sizeof(sandbox_fields[0]) <= SANDBOX_FIELDS_MAX,
               "struct sandbox_encoded holds every field");

/* One field's value v (NULL: absent) into r. */
static void decode(struct sandbox_record *r, const struct sandbox_field *f, const char *v)
{
    void *p = (char *)r + f->offset;

    if (f->kind == SANDBOX_FIELD_TEXT_OR_NULL) {
        *(const char **)p = v; /* present but empty is how "none" was recorded */
        return;
    }
    if (!v || !*v)
        return;
    switch (f->kind) {
    case SANDBOX_FIELD_TEXT:
    case SANDBOX_FIELD_TEXT_OR_NULL:
        *(const char **)p = v;
        break;
    case SANDBOX_FIELD_STATE:
        r->state = sandbox_state_parse(v);
        r->state_text = v;
        break;
    case SANDBOX_FIELD_REAL:
        *(double *)p = atof(v);
        break;
    case SANDBOX_FIELD_LONG:
        *(long *)p = (long)atoll(v);
        break;
    case SANDBOX_FIELD_MILLIS:
        *(long long *)p = atoll(v);
        break;
    case SANDBOX_FIELD_FLAG:
    case SANDBOX_FIELD_TRISTATE:
        *(int *)p = strcmp(v, f->yes) == 0;
        break;
    }
}

void sandbox_record_fill(struct sandbox_record *r, const redisReply *h)
{
    sandbox_record_defaults(r);
    for (size_t i = 0; i < sandbox_nfields; i++)
        decode(r, &sandbox_fields[i], reply_hget(h, sandbox_fields[i].name));
}

/* One field's value as written; num holds a number's text. */
static const char *encode(const struct sandbox_record *r, const struct sandbox_field *f, char *num,
                          size_t numlen)
{
    const void *p = (const char *)r + f->offset;
    const char *text;
    int v;

    switch (f->kind) {
    case SANDBOX_FIELD_TEXT:
    case SANDBOX_FIELD_TEXT_OR_NULL:
        text = *(const char *const *)p;
        return text ? text : "";
    case SANDBOX_FIELD_STATE:
        return sandbox_state_shown(r);
    case SANDBOX_FIELD_REAL:
        snprintf(num, numlen, "%.3f", *(const double *)p);
        return num;
    case SANDBOX_FIELD_LONG:
        snprintf(num, numlen, "%ld", *(const long *)p);
        return num;
    case SANDBOX_FIELD_MILLIS:
        snprintf(num, numlen, "%lld", *(const long long *)p);
        return num;
    case SANDBOX_FIELD_FLAG:
    case SANDBOX_FIELD_TRISTATE:
        v = *(const int *)p;
        return f->kind == SANDBOX_FIELD_TRISTATE && v < 0 ? "" : v ? f->yes : f->no;
    }
    return "";
}

void sandbox_record_encode(const struct sandbox_record *r, enum sandbox_encode_set set,
                           struct sandbox_encoded *out)
{
    out->n = 0;
    for (size_t i = 0; i < sandbox_nfields; i++) {
        const struct sandbox_field *f = &sandbox_fields[i];
        if (set == SANDBOX_ENCODE_CREATE && !f->on_create)
            continue;
        if (f->kind == SANDBOX_FIELD_TEXT_OR_NULL &&
            !*(const char *const *)((const char *)r + f->offset))
            continue; /* none recorded: the field stays absent */
        out->fv[2 * out->n] = f->name;
        out->fv[2 * out->n + 1] = encode(r, f, out->num[out->n], sizeof(out->num[0]));
        out->n++;
    }
}
