/* registry_gc.c: deletes the registry's manifests no template keeps
 * (decision 0081). A manifest goes only when none of its tags is kept: two
 * builds whose images are the same (a fully cached rebuild) share one. The
 * registry is read before Redis, so a tag pushed meanwhile is not seen, and a
 * build that was building when its tag was seen is kept (waiting, building
 * or now the template's). */
#include "registry_gc.h"

#include "registry_client.h"
#include "registry_names.h"
#include "template_storage.h"

#include <stdio.h>
#include <string.h>

/* tag -> digest for every tag of repo (absent ones left out), or NULL. */
static json_t *digests_of(struct registry_client *c, const char *repo, struct registry_gc_report *r,
                          char *err, size_t errlen)
{
    json_t *tags = registry_tags(c, repo, err, errlen), *out = json_object(), *tag;
    size_t i;

    if (!tags || !out) {
        json_decref(tags);
        json_decref(out);
        return NULL;
    }
    json_array_foreach(tags, i, tag)
    {
        char digest[REGISTRY_DIGEST_MAX];
        int found = json_is_string(tag)
                        ? registry_digest(c, repo, json_string_value(tag), digest, err, errlen)
                        : 0;
        if (found == 1)
            json_object_set_new(out, json_string_value(tag), json_string(digest));
        r->failed += found < 0;
    }
    json_decref(tags);
    return out;
}

/* Deletes each digest of tags that no kept tag shares. keep NULL: all. */
static void delete_unkept(struct registry_client *c, const char *repo, json_t *tags, json_t *keep,
                          struct registry_gc_report *r, char *err, size_t errlen)
{
    json_t *kept = json_object(), *digest, *done = json_object();
    const char *tag;

    json_object_foreach(tags, tag, digest) if (keep && json_object_get(keep, tag))
        json_object_set(kept, json_string_value(digest), json_true());
    json_object_foreach(tags, tag, digest)
    {
        const char *d = json_string_value(digest);
        if (json_object_get(kept, d) || json_object_get(done, d))
            continue;
        json_object_set(done, d, json_true());
        if (registry_manifest_delete(c, repo, d, err, errlen) == 0)
            r->deleted++;
        else
            r->failed++;
    }
    r->kept += (int)json_object_size(kept);
    json_decref(kept);
    json_decref(done);
}

int registry_template_forget(const struct corral_conf *conf, const char *ws, const char *tpl,
                             char *err, size_t errlen)
{
    struct registry_client c;
    struct registry_gc_report r = {0};
    char repo[REGISTRY_REPO_MAX];
    json_t *tags;

    if (registry_client_init(&c, conf) != 0 || registry_repo(ws, tpl, repo, sizeof(repo)) != 0)
        return 0;
    tags = digests_of(&c, repo, &r, err, errlen);
    if (!tags)
        return -1;
    delete_unkept(&c, repo, tags, NULL, &r, err, errlen);
    json_decref(tags);
    return r.failed ? -1 : 0;
}

/* The builds ws's template tpl keeps (an empty object when it is gone), or
 * NULL (Redis). */
static json_t *kept_builds(struct rconn *rc, const char *ws, const char *tpl)
{
    struct template_record t;
    json_t *keep = json_object();
    int found = keep ? template_find(rc, ws, tpl, &t) : -1;

    if (found == 1 && template_live_builds(rc, ws, &t, NULL, keep) != 0)
        found = -1;
    if (found < 0) {
        json_decref(keep);
        return NULL;
    }
    return keep;
}

static int collect_repo(struct rconn *rc, struct registry_client *c, const char *repo,
                        struct registry_gc_report *r, char *err, size_t errlen)
{
    char ws[17], tpl[49];
    json_t *tags, *keep;

    if (registry_repo_parse(repo, ws, tpl) != 0 || !*ws)
        return 0; /* the fleet's, or not Corral's naming: not ours to judge */
    r->repos++;
    tags = digests_of(c, repo, r, err, errlen);
    if (!tags)
        return 0; /* counted as failed; the next repository is still looked at */
    keep = kept_builds(rc, ws, tpl);
    if (keep)
        delete_unkept(c, repo, tags, keep, r, err, errlen);
    json_decref(tags);
    json_decref(keep);
    return keep ? 0 : -1;
}

int registry_gc_manifests(struct rconn *rc, const struct corral_conf *conf,
                          struct registry_gc_report *r, char *err, size_t errlen)
{
    struct registry_client c;
    json_t *repos, *repo;
    size_t i;
    int rv = 0;

    memset(r, 0, sizeof(*r));
    if (registry_client_init(&c, conf) != 0) {
        snprintf(err, errlen, "corral.conf names no registry");
        return -1;
    }
    repos = registry_catalog(&c, err, errlen);
    if (!repos)
        return -1;
    json_array_foreach(repos, i, repo)
    {
        if (json_is_string(repo) && rv == 0)
            rv = collect_repo(rc, &c, json_string_value(repo), r, err, errlen);
    }
    if (rv != 0)
        snprintf(err, errlen, "the state store is unreachable");
    json_decref(repos);
    return rv;
}
