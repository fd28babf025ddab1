/* template_storage.c: which builds of a template must stay in the registry,
 * and what a workspace's templates take there (decision 0081). A build stays
 * while it is the template's current one, a tag names it, or it is still
 * waiting or building; the rest is garbage, collected by corralctl
 * registry-gc. Sizes are what each build added over its base, as its worker
 * measured it. */
#include "template_storage.h"

#include <stdlib.h>
#include <string.h>

/* bid -> its size, when bid is one of the template's builds listed. */
static void keep_one(json_t *keep, const char *bid, const struct build_record *all, size_t n)
{
    long long size = 0;

    if (!bid || !*bid || json_object_get(keep, bid))
        return;
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].id, bid) == 0)
            size = all[i].size_bytes;
    json_object_set_new(keep, bid, json_integer(size));
}

/* The tags that stay where they are: all but those the new build takes. */
static void keep_tagged(json_t *keep, json_t *tags, json_t *moving, const struct build_record *all,
                        size_t n)
{
    size_t i, j;
    json_t *tag, *m;

    json_array_foreach(tags, i, tag)
    {
        const char *name = json_string_value(json_object_get(tag, "tag"));
        int moves = 0;
        json_array_foreach(moving, j, m) moves |=
            name && json_is_string(m) && strcmp(json_string_value(m), name) == 0;
        if (!moves)
            keep_one(keep, json_string_value(json_object_get(tag, "buildID")), all, n);
    }
}

int template_live_builds(struct rconn *rc, const char *ws, const struct template_record *t,
                         const struct build_record *next, json_t *keep)
{
    struct build_record *all = NULL;
    size_t n = 0;
    json_t *tags = template_tags(rc, ws, t->id), *moving = NULL;

    if (!tags || build_list(rc, ws, t->id, &all, &n) != 0) {
        json_decref(tags);
        return -1;
    }
    if (next)
        moving = json_loads(next->tags, 0, NULL);
    keep_one(keep, next ? next->id : t->build, all, n);
    keep_tagged(keep, tags, moving, all, n);
    for (size_t i = 0; i < n; i++)
        if (all[i].state == BUILD_STATE_WAITING || all[i].state == BUILD_STATE_BUILDING)
            keep_one(keep, all[i].id, all, n);
    json_decref(moving);
    json_decref(tags);
    free(all);
    return 0;
}

/* The sizes in keep, summed. */
static long long sum(json_t *keep)
{
    const char *bid;
    json_t *size;
    long long total = 0;

    json_object_foreach(keep, bid, size) total += json_integer_value(size);
    return total;
}

long long template_storage_used(struct rconn *rc, const char *ws, const struct build_record *next)
{
    struct template_record *ts = NULL;
    size_t n = 0;
    long long total = 0;

    if (template_list(rc, ws, &ts, &n) != 0)
        return -1;
    for (size_t i = 0; i < n && total >= 0; i++) {
        json_t *keep = json_object();
        int mine = next && strcmp(ts[i].id, next->template_id) == 0;
        if (!keep || template_live_builds(rc, ws, &ts[i], mine ? next : NULL, keep) != 0)
            total = -1;
        else
            total += sum(keep);
        json_decref(keep);
    }
    free(ts);
    return total;
}
