/* template_build.c: a build is a sandbox whose filesystem becomes a template
 * (docs/templates.md): the same placement, walls, limits and tier as any
 * create, with the steps in its create command. */
#include "template.h"

#include "audit.h"
#include "lifecycle.h"
#include "sandbox_store.h"
#include "scheduler.h"
#include "template_storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The configured template a chain of templates starts from ("" from an image). */
static int root_of(struct rconn *rc, const char *ws, const struct build_start *bs, char root[65])
{
    struct template_record base;
    int found;

    root[0] = '\0';
    if (!*bs->from_template)
        return 0;
    found = template_find(rc, ws, bs->from_template, &base);
    if (found < 0)
        return -1;
    snprintf(root, 65, "%s", found ? base.root : bs->from_template);
    return 0;
}

static char *build_section(const char *bid, const struct build_start *bs)
{
    json_t *b =
        json_pack("{s:s, s:O, s:b, s:s, s:I}", "id", bid, "steps", bs->steps, "force", bs->force,
                  "target", bs->target, "step_timeout_s", (json_int_t)bs->step_timeout_s);
    char *text = b ? json_dumps(b, JSON_COMPACT) : NULL;

    json_decref(b);
    return text;
}

static void spec_of(const char *bid, const struct build_start *bs, struct sandbox_spec *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->template_id, sizeof(s->template_id), "%s",
             *bs->from_template ? bs->from_template : bs->from_image);
    if (*bs->from_image)
        snprintf(s->image, sizeof(s->image), "%s", bs->from_image);
    snprintf(s->build_id, sizeof(s->build_id), "%s", bid);
    s->timeout_s = bs->timeout_s;
    s->timeout_given = 1;
    s->cpu_cores = (double)bs->cpu;
    s->memory_mb = bs->memory_mb;
    s->internet = -1;
    s->public_traffic = 0;
    s->secure = 1;
    s->metadata_json = strdup("{}");
    s->env_json = strdup("{}");
    s->allowed_json = strdup("[]");
    s->build_json = build_section(bid, bs);
}

static int recipe(struct rconn *rc, const char *ws, const char *bid, const struct build_start *bs,
                  const char *root)
{
    struct build_record b;
    char *tags = json_dumps(bs->tags, JSON_COMPACT);

    memset(&b, 0, sizeof(b));
    snprintf(b.id, sizeof(b.id), "%s", bid);
    snprintf(b.root, sizeof(b.root), "%s", root);
    snprintf(b.start_cmd, sizeof(b.start_cmd), "%s", bs->start_cmd);
    snprintf(b.ready_cmd, sizeof(b.ready_cmd), "%s", bs->ready_cmd);
    snprintf(b.user, sizeof(b.user), "%s", bs->user);
    snprintf(b.workdir, sizeof(b.workdir), "%s", bs->workdir);
    snprintf(b.target, sizeof(b.target), "%s", bs->target);
    snprintf(b.tags, sizeof(b.tags), "%s", tags ? tags : "[]");
    free(tags);
    return build_recipe_set(rc, ws, &b);
}

#define MIB (1024LL * 1024)

/* The operator's ceilings: the workspace's storage and its builds at once. */
static int admit(struct rconn *rc, const char *ws, const char *bid, const struct build_start *bs,
                 struct sched_error *err)
{
    long long used = template_storage_used(rc, ws, NULL);
    int slot;

    if (used < 0) {
        sched_error_set(err, 503, "state store unavailable");
        return -1;
    }
    if (used >= bs->storage_max_bytes) {
        sched_error_set(err, 403,
                        "templates: the workspace's templates take %lld MiB, the operator's "
                        "maximum is %lld MiB (template_storage_mb)",
                        used / MIB, bs->storage_max_bytes / MIB);
        return -1;
    }
    /* A build whose end was never heard gives its slot back after its own
     * timeout and the slack of a worker's death. */
    slot = build_slot_take(rc, ws, bid, bs->max_builds, (bs->timeout_s + 300) * 1000LL);
    if (slot == 1)
        return 0;
    if (slot == 0)
        sched_error_set(err, 429,
                        "builds: the workspace has %ld in progress, the operator's "
                        "maximum (max_builds)",
                        bs->max_builds);
    else
        sched_error_set(err, 503, "state store unavailable");
    return -1;
}

int template_build_start(struct rconn *rc, const struct sched_conf *c, const char *ws,
                         const char *actor, const char *tpl, const char *bid,
                         const struct build_start *bs, struct sched_error *err)
{
    struct sandbox_spec spec;
    struct sandbox_record rec;
    char sbid[SANDBOX_ID_MAX], root[65];
    int rv = -1;

    (void)tpl;
    if (admit(rc, ws, bid, bs, err) != 0) {
        build_end(rc, ws, bid, NULL, BUILD_STATE_ERROR, "0", err->message, "");
        return -1;
    }
    if (root_of(rc, ws, bs, root) != 0 || recipe(rc, ws, bid, bs, root) != 0) {
        sched_error_set(err, 503, "state store unavailable");
        build_end(rc, ws, bid, NULL, BUILD_STATE_ERROR, "0", err->message, "");
        return -1;
    }
    memset(&rec, 0, sizeof(rec));
    spec_of(bid, bs, &spec);
    if (!spec.metadata_json || !spec.env_json || !spec.allowed_json || !spec.build_json)
        sched_error_set(err, 500, "out of memory");
    else if (scheduler_create(rc, c, ws, actor, &spec, sbid, err) == 0) {
        if (sandbox_read(rc, ws, sbid, &rec) == 1 &&
            build_begin(rc, ws, bid, rec.worker, sbid) == 1)
            rv = 0;
        else { /* no build to run: its sandbox goes */
            sched_error_set(err, 503, "state store unavailable");
            sandbox_kill(rc, ws, sbid, AUDIT_KILLED, actor, "build not started");
        }
        sandbox_record_free(&rec);
    }
    sandbox_spec_free(&spec);
    if (rv != 0)
        build_end(rc, ws, bid, NULL, BUILD_STATE_ERROR, "0", err->message, "");
    return rv;
}

int template_build_check(struct rconn *rc, const char *ws, struct build_record *b)
{
    struct sandbox_record rec;
    char why[300];
    int found, live;

    if (b->state != BUILD_STATE_BUILDING)
        return 0;
    memset(&rec, 0, sizeof(rec));
    found = sandbox_read(rc, ws, b->sandbox, &rec);
    if (found < 0)
        return -1;
    live = found && strcmp(rec.worker, b->worker) == 0 &&
           (rec.state == SANDBOX_STATE_PENDING || rec.state == SANDBOX_STATE_RUNNING);
    if (live) {
        sandbox_record_free(&rec);
        return 0;
    }
    snprintf(why, sizeof(why), "the build's sandbox %s: %s", b->sandbox,
             !found                               ? "is gone"
             : strcmp(rec.worker, b->worker) != 0 ? "lost its worker"
             : *rec.reason                        ? rec.reason
                                                  : sandbox_state_shown(&rec));
    sandbox_record_free(&rec);
    if (found)
        sandbox_kill(rc, ws, b->sandbox, AUDIT_KILLED, "corral", "build failed");
    if (build_end(rc, ws, b->id, NULL, BUILD_STATE_ERROR, "", why, "") < 0)
        return -1;
    return build_read(rc, ws, b->id, b) < 0 ? -1 : 0;
}

/* The template as build b made it. */
static int make_template(struct rconn *rc, const char *ws, const struct build_record *b,
                         const char *image)
{
    struct template_record t;
    json_t *tags = json_loads(b->tags, 0, NULL), *tag;
    size_t i;

    memset(&t, 0, sizeof(t));
    snprintf(t.id, sizeof(t.id), "%s", b->template_id);
    snprintf(t.build, sizeof(t.build), "%s", b->id);
    snprintf(t.image, sizeof(t.image), "%s", image);
    snprintf(t.root, sizeof(t.root), "%s", b->root);
    snprintf(t.start_cmd, sizeof(t.start_cmd), "%s", b->start_cmd);
    snprintf(t.ready_cmd, sizeof(t.ready_cmd), "%s", b->ready_cmd);
    snprintf(t.user, sizeof(t.user), "%s", b->user);
    snprintf(t.workdir, sizeof(t.workdir), "%s", b->workdir);
    if (template_built(rc, ws, &t) != 0) {
        json_decref(tags);
        return -1;
    }
    json_array_foreach(tags, i, tag)
    {
        if (json_string_value(tag))
            template_tag_set(rc, ws, t.id, json_string_value(tag), b->id);
    }
    json_decref(tags);
    return 0;
}

/* A ready build whose size would take the workspace over its ceiling fails:
 * o becomes that error (why holds its reason). 0, or -1 (Redis). */
static int storage_check(struct rconn *rc, const char *ws, const struct build_record *b,
                         struct build_outcome *o, long long max, char *why, size_t len)
{
    struct build_record next = *b;
    long long used;

    if (o->to != BUILD_STATE_READY)
        return 0;
    next.size_bytes = o->size_bytes;
    if (build_size_set(rc, ws, b->id, o->size_bytes) != 0 ||
        (used = template_storage_used(rc, ws, &next)) < 0)
        return -1;
    if (used <= max)
        return 0;
    snprintf(why, len,
             "the template's image adds %lld MiB: the workspace's templates would take %lld MiB, "
             "over the operator's maximum of %lld MiB (template_storage_mb)",
             o->size_bytes / MIB, used / MIB, max / MIB);
    o->to = BUILD_STATE_ERROR;
    o->step = "finalize";
    o->reason = why;
    o->image = "";
    return 0;
}

int template_build_finish(struct rconn *rc, const char *ws, const char *wid,
                          const struct build_record *b, const struct build_outcome *given,
                          long long storage_max_bytes)
{
    struct build_outcome o = *given;
    char why[400];
    int n;

    if (storage_check(rc, ws, b, &o, storage_max_bytes, why, sizeof(why)) != 0)
        return -1;
    n = build_end(rc, ws, b->id, wid, o.to, o.step, o.reason, o.image);
    if (n != 1)
        return n;
    if (o.to == BUILD_STATE_READY && make_template(rc, ws, b, o.image) != 0)
        return -1;
    sandbox_kill(rc, ws, b->sandbox, AUDIT_KILLED, "corral",
                 o.to == BUILD_STATE_READY ? "build done" : "build failed");
    return 1;
}
