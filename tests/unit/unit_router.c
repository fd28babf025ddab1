/* Unit tests of handlers/router.c's table lookup (router_match): which
 * handler and role a method and path reach, the "{}" segments it captures,
 * and 404 (no such path), 405 (path known, not with this method) and 501
 * (a route of E2B's spec Corral does not serve). No FastCGI, no Redis. */
#include "check.h"
#include "log_format.h"
#include "router.h"

#include <string.h>

void unit_router(int *total_passed, int *total_failed);

static int passed, failed;

static struct route_match route(const char *method, const char *path, struct request *req)
{
    struct route_match m;

    memset(req, 0, sizeof(*req));
    req->method = method;
    snprintf(req->path, sizeof(req->path), "%s", path);
    router_match(req, &m);
    return m;
}

/* 1 when method and path reach fn with access, capturing p0 (NULL: nothing). */
static int served(const char *method, const char *path, handler_fn fn, enum access access,
                  const char *p0)
{
    struct request req;
    struct route_match m = route(method, path, &req);

    return m.outcome == ROUTE_SERVED && m.fn == fn && m.access == access &&
           (p0 ? strcmp(req.params[0], p0) == 0 : req.params[0][0] == '\0');
}

static enum route_outcome outcome(const char *method, const char *path)
{
    struct request req;

    return route(method, path, &req).outcome;
}

/* 1 when method and path are E2B spec routes Corral refuses with 501, naming spec. */
static int unserved(const char *method, const char *path, const char *spec)
{
    struct request req;
    struct route_match m = route(method, path, &req);

    return m.outcome == ROUTE_UNSERVED && m.access == ACCESS_MEMBER && m.spec_route &&
           strcmp(m.spec_route, spec) == 0;
}

/* Every served route: method, path, handler, who may call it, first param.
 * The owner-only routes, the worker routes, internal and both E2B spellings of
 * create and connect among them. */
static const struct {
    const char *method, *path;
    handler_fn fn;
    enum access access;
    const char *p0;
} served_routes[] = {
    {"GET", "/health", h_health, ACCESS_PUBLIC, NULL},
    {"POST", "/v1/sandboxes", h_sandbox_create, ACCESS_MEMBER, NULL},
    {"GET", "/v1/sandboxes", h_sandbox_list, ACCESS_MEMBER, NULL},
    {"GET", "/v1/sandboxes/ab12", h_sandbox_get, ACCESS_MEMBER, "ab12"},
    {"DELETE", "/v1/sandboxes/ab12", h_sandbox_delete, ACCESS_MEMBER, "ab12"},
    {"PUT", "/v1/sandboxes/ab12/network", h_sandbox_network, ACCESS_MEMBER, "ab12"},
    {"GET", "/v1/workspace", h_workspace_get, ACCESS_MEMBER, NULL},
    {"PATCH", "/v1/workspace", h_workspace_patch, ACCESS_OWNER, NULL},
    {"POST", "/v1/keys", h_key_create, ACCESS_OWNER, NULL},
    {"DELETE", "/v1/keys/k1", h_key_delete, ACCESS_OWNER, "k1"},
    {"POST", "/v1/join-tokens", h_jointoken_create, ACCESS_OWNER, NULL},
    {"DELETE", "/v1/workers/w9", h_worker_delete, ACCESS_OWNER, "w9"},
    {"GET", "/v1/workers", h_workers_list, ACCESS_MEMBER, NULL},
    {"GET", "/v1/audit", h_audit, ACCESS_OWNER, NULL},
    {"POST", "/v1/worker/handshake", h_worker_handshake, ACCESS_WORKER, NULL},
    {"POST", "/v1/worker/heartbeat", h_worker_heartbeat, ACCESS_WORKER, NULL},
    {"POST", "/v1/worker/telemetry", h_worker_telemetry, ACCESS_WORKER, NULL},
    {"GET", "/v1/sandboxes/ab12/metrics", h_sandbox_metrics, ACCESS_MEMBER, "ab12"},
    /* "metrics" is not a sandbox id */
    {"GET", "/sandboxes/metrics", h_e2b_sandboxes_metrics, ACCESS_MEMBER, NULL},
    {"GET", "/sandboxes/i1/metrics", h_e2b_sandbox_metrics, ACCESS_MEMBER, "i1"},
    {"GET", "/sandboxes/i1/logs", h_e2b_logs, ACCESS_MEMBER, "i1"},
    {"GET", "/v2/sandboxes/i1/logs", h_e2b_logs_v2, ACCESS_MEMBER, "i1"},
    {"GET", "/v1/internal/route/sb1", h_internal_route, ACCESS_INTERNAL, "sb1"},
    {"POST", "/v2/sandboxes", h_e2b_create, ACCESS_MEMBER, NULL},
    {"POST", "/sandboxes", h_e2b_create, ACCESS_MEMBER, NULL},
    {"GET", "/v2/sandboxes", h_e2b_list_v2, ACCESS_MEMBER, NULL},
    {"GET", "/sandboxes", h_e2b_list, ACCESS_MEMBER, NULL},
    {"GET", "/sandboxes/i1", h_e2b_get, ACCESS_MEMBER, "i1"},
    {"DELETE", "/sandboxes/i1", h_sandbox_delete, ACCESS_MEMBER, "i1"},
    {"POST", "/sandboxes/i1/timeout", h_e2b_timeout, ACCESS_MEMBER, "i1"},
    {"PUT", "/sandboxes/i1/network", h_e2b_network, ACCESS_MEMBER, "i1"},
    {"POST", "/v2/sandboxes/i1/connect", h_e2b_connect, ACCESS_MEMBER, "i1"},
    {"POST", "/sandboxes/i1/connect", h_e2b_connect, ACCESS_MEMBER, "i1"},
    {"GET", "/templates", h_e2b_templates, ACCESS_MEMBER, NULL},
    {"GET", "/templates/aliases/base", h_e2b_template_alias, ACCESS_MEMBER, "base"},
    {"POST", "/sandboxes/i1/refreshes", h_e2b_refreshes, ACCESS_MEMBER, "i1"},
    /* the volume file API: the volume's token, every operation of its spec */
    {"GET", "/volumecontent/vol-1/path", h_volume_content, ACCESS_VOLUME, "vol-1"},
    {"PATCH", "/volumecontent/vol-1/path", h_volume_content, ACCESS_VOLUME, "vol-1"},
    {"DELETE", "/volumecontent/vol-1/path", h_volume_content, ACCESS_VOLUME, "vol-1"},
    {"GET", "/volumecontent/vol-1/dir", h_volume_content, ACCESS_VOLUME, "vol-1"},
    {"POST", "/volumecontent/vol-1/dir", h_volume_content, ACCESS_VOLUME, "vol-1"},
    {"GET", "/volumecontent/vol-1/file", h_volume_content, ACCESS_VOLUME, "vol-1"},
    {"PUT", "/volumecontent/vol-1/file", h_volume_content, ACCESS_VOLUME, "vol-1"},
};

static void test_served(void)
{
    for (size_t i = 0; i < sizeof(served_routes) / sizeof(served_routes[0]); i++)
        CHECK(served(served_routes[i].method, served_routes[i].path, served_routes[i].fn,
                     served_routes[i].access, served_routes[i].p0));
}

static void test_params(void)
{
    struct request req;
    char seg[96];

    /* a segment is everything up to the next "/", whatever it holds */
    CHECK(served("GET", "/sandboxes/a.b-c_d", h_e2b_get, ACCESS_MEMBER, "a.b-c_d"));
    /* 79 characters fit params[0] (80 bytes: a 64-hex files hash does); 80
     * do not, and match nothing */
    memset(seg, 'x', 79);
    seg[79] = '\0';
    CHECK(route("GET", "/v1/sandboxes/", &req).outcome == ROUTE_NOT_FOUND);
    snprintf(req.path, sizeof(req.path), "/v1/sandboxes/%s", seg);
    CHECK(served("GET", req.path, h_sandbox_get, ACCESS_MEMBER, seg));
    memset(seg, 'x', 80);
    seg[80] = '\0';
    snprintf(req.path, sizeof(req.path), "/v1/sandboxes/%s", seg);
    CHECK(outcome("GET", req.path) == ROUTE_NOT_FOUND);
}

/* What the router refuses, and how: 404 when no route has the path, 405 when
 * the path is known but not with this method. */
static const struct {
    const char *method, *path;
    enum route_outcome want;
} refused_routes[] = {
    /* 404: no route has this path */
    {"GET", "/", ROUTE_NOT_FOUND},
    {"GET", "/nope", ROUTE_NOT_FOUND},
    {"GET", "/health/", ROUTE_NOT_FOUND},
    {"GET", "/healthz", ROUTE_NOT_FOUND},
    {"GET", "/v1/sandboxes/", ROUTE_NOT_FOUND}, /* an empty segment */
    {"GET", "/v1/sandboxes/a/b", ROUTE_NOT_FOUND},
    {"PUT", "/v1/sandboxes/a/networks", ROUTE_NOT_FOUND},
    {"GET", "/V1/workspace", ROUTE_NOT_FOUND}, /* paths are case-sensitive */
    {"GET", "", ROUTE_NOT_FOUND},
    /* 405: the path is known, not with this method (methods are case-sensitive) */
    {"POST", "/health", ROUTE_METHOD_NOT_ALLOWED},
    {"get", "/health", ROUTE_METHOD_NOT_ALLOWED},
    {"PUT", "/v1/sandboxes", ROUTE_METHOD_NOT_ALLOWED},
    {"POST", "/v1/sandboxes/ab12", ROUTE_METHOD_NOT_ALLOWED},
    {"GET", "/v1/sandboxes/ab12/network", ROUTE_METHOD_NOT_ALLOWED},
    {"DELETE", "/v1/workspace", ROUTE_METHOD_NOT_ALLOWED},
    {"POST", "/v1/audit", ROUTE_METHOD_NOT_ALLOWED},
    {"GET", "/v1/worker/heartbeat", ROUTE_METHOD_NOT_ALLOWED},
    {"POST", "/v1/internal/route/sb1", ROUTE_METHOD_NOT_ALLOWED},
    {"DELETE", "/templates", ROUTE_METHOD_NOT_ALLOWED},
    /* a path only E2B's spec knows, with a method it does not list: 405 too */
    {"POST", "/teams", ROUTE_METHOD_NOT_ALLOWED},
    {"DELETE", "/volumes", ROUTE_METHOD_NOT_ALLOWED},
    {"POST", "/volumecontent/vol-1/file", ROUTE_METHOD_NOT_ALLOWED},
    {"PUT", "/volumecontent/vol-1/dir", ROUTE_METHOD_NOT_ALLOWED},
    {"GET", "/volumecontent/vol-1/other", ROUTE_NOT_FOUND},
    {"GET", "/volumecontent/vol-1", ROUTE_NOT_FOUND},
};

static void test_refused(void)
{
    for (size_t i = 0; i < sizeof(refused_routes) / sizeof(refused_routes[0]); i++)
        CHECK(outcome(refused_routes[i].method, refused_routes[i].path) == refused_routes[i].want);
}

/* E2B spec routes Corral answers 501, each naming the spec's route. */
static const struct {
    const char *method, *path, *spec;
} unserved_routes[] = {
    /* checked before the served table: "metrics" is not a sandbox id */
    {"POST", "/templates/t", "/templates/{templateID}"},
    {"GET", "/teams/t1/metrics", "/teams/{teamID}/metrics"},
    {"GET", "/teams", "/teams"},
    {"PATCH", "/api-keys/k1", "/api-keys/{apiKeyID}"},
    {"GET", "/templates/t/builds/b/logs", "/templates/{templateID}/builds/{buildID}/logs"},
};

static void test_unserved(void)
{
    for (size_t i = 0; i < sizeof(unserved_routes) / sizeof(unserved_routes[0]); i++)
        CHECK(
            unserved(unserved_routes[i].method, unserved_routes[i].path, unserved_routes[i].spec));
    /* and never for a path or method the spec does not have */
    CHECK(outcome("GET", "/sandboxes/i1/unknown") == ROUTE_NOT_FOUND);
    CHECK(outcome("GET", "/templates/aliases/base") == ROUTE_SERVED);
    /* issue 28's: served now */
    CHECK(outcome("GET", "/templates/base") == ROUTE_SERVED);
    CHECK(outcome("GET", "/templates/t/files/h") == ROUTE_SERVED);
    CHECK(outcome("POST", "/v3/templates") == ROUTE_SERVED);
    CHECK(outcome("DELETE", "/templates/tags") == ROUTE_SERVED);
    CHECK(outcome("PUT", "/templatefiles/h") == ROUTE_SERVED);
}

/* Which log field a route's "{}" fills (decision 0046): the sandbox of both
 * APIs' sandbox routes and of the data plane's lookup, the worker of the
 * worker routes, nothing for a key or a join token. */
static void test_log_fields(void)
{
    struct request req;

    CHECK(route("GET", "/sandboxes/abc", &req).param_field == LOG_SANDBOX);
    CHECK(route("POST", "/sandboxes/abc/timeout", &req).param_field == LOG_SANDBOX);
    CHECK(route("DELETE", "/v1/sandboxes/abc", &req).param_field == LOG_SANDBOX);
    CHECK(route("PUT", "/v1/sandboxes/abc/network", &req).param_field == LOG_SANDBOX);
    CHECK(route("GET", "/v1/internal/route/abc", &req).param_field == LOG_SANDBOX);
    CHECK(route("DELETE", "/v1/workers/abc", &req).param_field == LOG_WORKER);
    CHECK(route("DELETE", "/v1/keys/abc", &req).param_field == -1);
    CHECK(route("DELETE", "/v1/join-tokens/abc", &req).param_field == -1);
    CHECK(route("GET", "/v1/sandboxes", &req).param_field == -1);
    CHECK(route("GET", "/no/such/route", &req).param_field == -1);
}

void unit_router(int *total_passed, int *total_failed)
{
    test_log_fields();
    test_served();
    test_params();
    test_refused();
    test_unserved();
    *total_passed += passed;
    *total_failed += failed;
}
