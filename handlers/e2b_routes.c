/* E2B's spec/openapi.yml (e2b-dev/E2B) routes that Corral does not serve.
 * Every (method, path) of the spec is either in router.c's table or here;
 * tests/integration/e2b_round2.test.mjs reads this table and calls each row.
 * A "{name}" segment matches one non-empty path segment. */
#include "e2b_routes.h"

#include <stddef.h>
#include <string.h>

struct spec_route {
    const char *method;
    const char *path;
};

static const struct spec_route unserved[] = {
    {"GET", "/teams"},
    {"GET", "/teams/{teamID}/metrics"},
    {"GET", "/teams/{teamID}/metrics/max"},
    {"GET", "/v2/templates"},
    {"POST", "/v2/templates"},
    {"POST", "/templates"},
    {"POST", "/templates/{templateID}"},
    {"PATCH", "/templates/{templateID}"},
    {"POST", "/templates/{templateID}/builds/{buildID}"},
    {"GET", "/templates/{templateID}/builds/{buildID}/logs"},
    {"GET", "/nodes"},
    {"GET", "/nodes/{nodeID}"},
    {"POST", "/nodes/{nodeID}"},
    {"POST", "/admin/teams/{teamID}/sandboxes/kill"},
    {"GET", "/admin/sandboxes/running-counts"},
    {"POST", "/admin/teams/{teamID}/builds/cancel"},
    {"POST", "/admin/teams/{teamID}/api-keys"},
    {"DELETE", "/admin/teams/{teamID}/api-keys/{apiKeyID}"},
    {"POST", "/access-tokens"},
    {"DELETE", "/access-tokens/{accessTokenID}"},
    {"GET", "/api-keys"},
    {"POST", "/api-keys"},
    {"PATCH", "/api-keys/{apiKeyID}"},
    {"DELETE", "/api-keys/{apiKeyID}"},
};

/* Placeholders matched, or -1 when path does not fit the template. */
static int fit(const char *tmpl, const char *path)
{
    int holes = 0;

    while (*tmpl && *path) {
        if (*tmpl == '{') {
            size_t n = strcspn(path, "/");
            const char *close = strchr(tmpl, '}');
            if (n == 0 || !close)
                return -1;
            path += n;
            tmpl = close + 1;
            holes++;
            continue;
        }
        if (*tmpl++ != *path++)
            return -1;
    }
    return *tmpl == '\0' && *path == '\0' ? holes : -1;
}

/* Spec routes router.c serves whose literal segment a looser unserved row
 * would take for a placeholder ("tags" for POST /templates/{templateID}). */
static const struct spec_route served_literals[] = {
    {"POST", "/templates/tags"},
    {"DELETE", "/templates/tags"},
};

static int served_literal(const char *method, const char *path)
{
    for (size_t i = 0; i < sizeof(served_literals) / sizeof(served_literals[0]); i++)
        if (strcmp(served_literals[i].method, method) == 0 &&
            strcmp(served_literals[i].path, path) == 0)
            return 1;
    return 0;
}

const char *e2b_unserved_route(const char *method, const char *path, int *path_known)
{
    const char *best = NULL;
    int best_holes = 0;

    *path_known = 0;
    if (served_literal(method, path))
        return NULL;
    for (size_t i = 0; i < sizeof(unserved) / sizeof(unserved[0]); i++) {
        int holes = fit(unserved[i].path, path);
        if (holes < 0)
            continue;
        if (strcmp(unserved[i].method, method) != 0) {
            *path_known = 1;
            continue;
        }
        /* "/templates/tags" over "/templates/{templateID}". */
        if (!best || holes < best_holes) {
            best = unserved[i].path;
            best_holes = holes;
        }
    }
    return best;
}
