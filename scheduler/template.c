/* template.c: a create from a workspace's own template (docs/templates.md). */
#include "template.h"

#include "scheduler.h"

#include "commands.h"
#include "registry_names.h"
#include "worker_store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int template_lookup(struct rconn *rc, const char *ws, const char *ref, struct template_record *t,
                    char bid[TEMPLATE_ID_MAX], struct sched_error *err)
{
    char name[TEMPLATE_NAME_MAX];
    const char *colon = strchr(ref, ':');
    int found, tagged;

    snprintf(name, sizeof(name), "%.*s", colon ? (int)(colon - ref) : (int)strlen(ref), ref);
    found = template_find(rc, ws, name, t);
    if (found <= 0) {
        sched_error_set(err, found < 0 ? 503 : 404,
                        found < 0 ? "state store unavailable" : "template: '%s' not found", ref);
        return found;
    }
    snprintf(bid, TEMPLATE_ID_MAX, "%s", t->build);
    if (!colon || strcmp(colon + 1, "default") == 0)
        return 1;
    tagged = template_tag_get(rc, ws, t->id, colon + 1, bid);
    if (tagged <= 0) {
        sched_error_set(err, tagged < 0 ? 503 : 404,
                        tagged < 0 ? "state store unavailable" : "template: '%s' not found", ref);
        return tagged < 0 ? -1 : 0;
    }
    return 1;
}

/* The image of build bid: the template's own when it is the latest. */
static int build_image(struct rconn *rc, const char *ws, const struct template_record *t,
                       const char *bid, char *out, size_t len)
{
    struct build_record b;

    if (strcmp(bid, t->build) == 0) {
        snprintf(out, len, "%s", t->image);
        return 0;
    }
    if (build_read(rc, ws, bid, &b) != 1 || b.state != BUILD_STATE_READY)
        return -1;
    snprintf(out, len, "%s", b.image);
    return 0;
}

static char *start_of(const struct template_record *t, long timeout_s)
{
    json_t *s;
    char *text;

    if (!*t->start_cmd)
        return NULL;
    s = json_pack("{s:s, s:s, s:s, s:s, s:I}", "cmd", t->start_cmd, "ready", t->ready_cmd, "user",
                  *t->user ? t->user : "user", "workdir", *t->workdir ? t->workdir : "/home/user",
                  "timeout_s", (json_int_t)timeout_s);
    text = s ? json_dumps(s, JSON_COMPACT) : NULL;
    json_decref(s);
    return text;
}

int template_resolve(struct rconn *rc, const char *ws, long ready_timeout_s,
                     struct sandbox_spec *spec, struct sched_error *err)
{
    struct template_record t;
    char bid[TEMPLATE_ID_MAX];
    struct sched_error quiet;
    int found;

    if (*spec->image) /* a snapshot's */
        return 0;
    found = template_lookup(rc, ws, spec->template_id, &t, bid, &quiet);
    if (found < 0) {
        sched_error_set(err, 503, "state store unavailable");
        return -1;
    }
    if (found == 0)
        return 0;
    if (!*bid || build_image(rc, ws, &t, bid, spec->image, sizeof(spec->image)) != 0) {
        sched_error_set(err, 409, "template: '%s' has no ready build", spec->template_id);
        return -1;
    }
    snprintf(spec->base_template, sizeof(spec->base_template), "%s", t.root);
    free(spec->start_json);
    spec->start_json =
        *spec->build_id ? NULL : start_of(&t, ready_timeout_s); /* a build runs steps, not it */
    return 0;
}

static void forget_in(struct rconn *rc, const char *pool, const char *repository)
{
    struct worker_ids ids;

    if (worker_ids_all(rc, pool, &ids) != 0)
        return;
    for (size_t i = 0; i < ids.n; i++)
        if (worker_is_alive(rc, pool, ids.id[i]) == 1)
            command_send_args(rc, pool, ids.id[i], "template_remove", "",
                              json_pack("{s:s}", "repository", repository));
    worker_ids_free(&ids);
}

void template_images_forget(struct rconn *rc, const char *ws, const char *registry, const char *tpl)
{
    char repo[REGISTRY_REPO_MAX], repository[REGISTRY_REPO_MAX + 260];

    if (!*registry || registry_repo(ws, tpl, repo, sizeof(repo)) != 0)
        return;
    snprintf(repository, sizeof(repository), "%s/%s", registry, repo);
    forget_in(rc, ws, repository);
    if (*ws)
        forget_in(rc, "", repository);
}
