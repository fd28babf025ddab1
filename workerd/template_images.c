/* template_images.c: a deleted template's local names removed, never forced:
 * an image a sandbox runs on stays until that sandbox is gone. */
#include "template_images.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

int template_ref_of(const char *ref, const char *repository)
{
    size_t n = strlen(repository);

    return n > 0 && strncmp(ref, repository, n) == 0 && (ref[n] == ':' || ref[n] == '@');
}

/* DELETE /images/<ref>, not forced: 1 removed, 0 in use (409), -1. */
static int untag(struct docker *d, const char *ref, char *err, size_t errlen)
{
    char path[600], *e = curl_easy_escape(d->curl, ref, 0);
    json_t *ans = NULL;
    long status = 0;
    int rc;

    if (!e)
        return -1;
    snprintf(path, sizeof(path), "/images/%s", e);
    curl_free(e);
    rc = docker_call(d, "DELETE", path, NULL, 30000, &status, &ans, err, errlen);
    json_decref(ans);
    if (rc != 0)
        return -1;
    return status == 200 || status == 404 ? 1 : 0;
}

static int untag_all(struct docker *d, json_t *refs, const char *repository, int *removed,
                     int *kept, char *err, size_t errlen)
{
    size_t i;
    json_t *r;

    json_array_foreach(refs, i, r)
    {
        const char *ref = json_string_value(r);
        int rc = ref && template_ref_of(ref, repository) ? untag(d, ref, err, errlen) : 2;
        if (rc < 0)
            return -1;
        *removed += rc == 1;
        *kept += rc == 0;
    }
    return 0;
}

int template_images_remove(struct docker *d, const char *repository, int *removed, int *kept,
                           char *err, size_t errlen)
{
    json_t *all = NULL, *img;
    long status = 0;
    size_t i;
    int rc = 0;

    *removed = *kept = 0;
    if (docker_call(d, "GET", "/images/json?digests=1", NULL, 30000, &status, &all, err, errlen) !=
        0)
        return -1;
    json_array_foreach(all, i, img)
    {
        if (rc == 0)
            rc = untag_all(d, json_object_get(img, "RepoTags"), repository, removed, kept, err,
                           errlen);
        if (rc == 0)
            rc = untag_all(d, json_object_get(img, "RepoDigests"), repository, removed, kept, err,
                           errlen);
    }
    json_decref(all);
    return rc;
}
