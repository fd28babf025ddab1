#include "router.h"

#include "clock.h"
#include "e2b_routes.h"
#include "log.h"
#include "ratelimit.h"
#include "respond.h"
#include "secrets_routes.h"
#include "volume_token.h"

#include <stdio.h>
#include <string.h>

/* Who may call what, in one table. A join token reaches exactly the worker
 * routes; an API key reaches everything else its role allows. */
struct route {
    const char *method;  /* "*" matches any */
    const char *pattern; /* "{}" is one path segment; a trailing "*" is a prefix */
    enum access access;
    handler_fn fn;
};

static const struct route routes[] = {
    {"GET", "/health", ACCESS_PUBLIC, h_health},
    {"POST", "/v1/sandboxes", ACCESS_MEMBER, h_sandbox_create},
    {"GET", "/v1/sandboxes", ACCESS_MEMBER, h_sandbox_list},
    {"GET", "/v1/sandboxes/{}", ACCESS_MEMBER, h_sandbox_get},
    {"GET", "/v1/sandboxes/{}/metrics", ACCESS_MEMBER, h_sandbox_metrics},
    {"DELETE", "/v1/sandboxes/{}", ACCESS_MEMBER, h_sandbox_delete},
    {"PUT", "/v1/sandboxes/{}/network", ACCESS_MEMBER, h_sandbox_network},
    {"POST", "/v1/sandboxes/{}/pause", ACCESS_MEMBER, h_sandbox_pause},
    {"POST", "/v1/sandboxes/{}/resume", ACCESS_MEMBER, h_sandbox_resume},
    {"POST", "/v1/sandboxes/{}/snapshots", ACCESS_MEMBER, h_sandbox_snapshot_create},
    {"GET", "/v1/snapshots", ACCESS_MEMBER, h_snapshots},
    {"DELETE", "/v1/snapshots/{}", ACCESS_MEMBER, h_snapshot_delete},
    {"POST", "/v1/volumes", ACCESS_MEMBER, h_volume_create},
    {"GET", "/v1/volumes", ACCESS_MEMBER, h_volumes},
    {"GET", "/v1/volumes/{}", ACCESS_MEMBER, h_volume_get},
    {"DELETE", "/v1/volumes/{}", ACCESS_MEMBER, h_volume_delete},
    {"GET", "/v1/workspace", ACCESS_MEMBER, h_workspace_get},
    {"PATCH", "/v1/workspace", ACCESS_OWNER, h_workspace_patch},
    {"POST", "/v1/keys", ACCESS_OWNER, h_key_create},
    {"DELETE", "/v1/keys/{}", ACCESS_OWNER, h_key_delete},
    {"POST", "/v1/join-tokens", ACCESS_OWNER, h_jointoken_create},
    {"DELETE", "/v1/join-tokens/{}", ACCESS_OWNER, h_jointoken_delete},
    {"GET", "/v1/workers", ACCESS_MEMBER, h_workers_list},
    {"DELETE", "/v1/workers/{}", ACCESS_OWNER, h_worker_delete},
    {"GET", "/v1/audit", ACCESS_OWNER, h_audit},
    {"POST", "/v1/worker/handshake", ACCESS_WORKER, h_worker_handshake},
    {"POST", "/v1/worker/heartbeat", ACCESS_WORKER, h_worker_heartbeat},
    {"POST", "/v1/worker/telemetry", ACCESS_WORKER, h_worker_telemetry},
    {"POST", "/v1/worker/audit", ACCESS_WORKER, h_worker_audit},
    {"POST", "/v1/worker/builds/{}", ACCESS_WORKER, h_worker_build_report},
    {"GET", "/v1/worker/build-files/{}/{}", ACCESS_WORKER, h_worker_build_files},
    {"POST", "/v1/worker/registry-token", ACCESS_WORKER, h_worker_registry_token},
    {"GET", "/v1/worker/tunnel", ACCESS_WORKER, h_worker_tunnel},
    {"GET", "/v1/internal/route/{}", ACCESS_INTERNAL, h_internal_route},
    /* The E2B surface. */
    {"POST", "/v2/sandboxes", ACCESS_MEMBER, h_e2b_create},
    {"POST", "/sandboxes", ACCESS_MEMBER, h_e2b_create},
    {"GET", "/v2/sandboxes", ACCESS_MEMBER, h_e2b_list_v2},
    {"GET", "/sandboxes", ACCESS_MEMBER, h_e2b_list},
    /* Before "/sandboxes/{}", which would take "metrics" for a sandbox id. */
    {"GET", "/sandboxes/metrics", ACCESS_MEMBER, h_e2b_sandboxes_metrics},
    {"GET", "/sandboxes/{}", ACCESS_MEMBER, h_e2b_get},
    {"GET", "/sandboxes/{}/metrics", ACCESS_MEMBER, h_e2b_sandbox_metrics},
    {"GET", "/sandboxes/{}/logs", ACCESS_MEMBER, h_e2b_logs},
    {"GET", "/v2/sandboxes/{}/logs", ACCESS_MEMBER, h_e2b_logs_v2},
    {"DELETE", "/sandboxes/{}", ACCESS_MEMBER, h_sandbox_delete},
    {"POST", "/sandboxes/{}/timeout", ACCESS_MEMBER, h_e2b_timeout},
    {"PUT", "/sandboxes/{}/network", ACCESS_MEMBER, h_e2b_network},
    {"POST", "/sandboxes/{}/pause", ACCESS_MEMBER, h_e2b_pause},
    {"POST", "/sandboxes/{}/resume", ACCESS_MEMBER, h_e2b_resume},
    {"POST", "/sandboxes/{}/refreshes", ACCESS_MEMBER, h_e2b_refreshes},
    {"POST", "/sandboxes/{}/snapshots", ACCESS_MEMBER, h_e2b_snapshot_create},
    {"POST", "/sandboxes/{}/fork", ACCESS_MEMBER, h_e2b_fork},
    {"GET", "/snapshots", ACCESS_MEMBER, h_e2b_snapshots},
    /* Before "/templates/{}", which would take "tags" for a template id. */
    {"POST", "/templates/tags", ACCESS_MEMBER, h_template_tags_assign},
    {"DELETE", "/templates/tags", ACCESS_MEMBER, h_template_tags_delete},
    {"DELETE", "/templates/{}", ACCESS_MEMBER, h_e2b_template_delete},
    {"GET", "/templates/{}", ACCESS_MEMBER, h_e2b_template_get},
    {"GET", "/templates/{}/tags", ACCESS_MEMBER, h_template_tags_list},
    {"PATCH", "/v2/templates/{}", ACCESS_MEMBER, h_e2b_template_patch},
    {"POST", "/v3/templates", ACCESS_MEMBER, h_e2b_template_request},
    {"GET", "/templates/{}/files/{}", ACCESS_MEMBER, h_e2b_template_files},
    {"POST", "/v2/templates/{}/builds/{}", ACCESS_MEMBER, h_e2b_template_build},
    {"GET", "/templates/{}/builds/{}/status", ACCESS_MEMBER, h_e2b_build_status},
    {"PUT", "/templatefiles/{}", ACCESS_PUBLIC, h_template_upload},
    /* Secrets and workload identity (decision 0090). */
    {"GET", "/secrets", ACCESS_MEMBER, h_secrets_list},
    {"POST", "/secrets", ACCESS_MEMBER, h_secret_create},
    {"GET", "/secrets/{}", ACCESS_MEMBER, h_secret_get},
    {"POST", "/secrets/{}", ACCESS_MEMBER, h_secret_update},
    {"DELETE", "/secrets/{}", ACCESS_MEMBER, h_secret_delete},
    {"GET", "/identity/{}/.well-known/openid-configuration", ACCESS_PUBLIC, h_identity_discovery},
    {"GET", "/identity/{}/jwks.json", ACCESS_PUBLIC, h_identity_jwks},
    {"POST", "/v1/workspace/identity-keys/rotate", ACCESS_OWNER, h_identity_rotate},
    {"POST", "/v1/worker/egress-resolve", ACCESS_WORKER, h_worker_egress_resolve},
    {"POST", "/v1/worker/egress-audit", ACCESS_WORKER, h_worker_egress_audit},
    {"POST", "/volumes", ACCESS_MEMBER, h_e2b_volume_create},
    {"GET", "/volumes", ACCESS_MEMBER, h_e2b_volumes},
    {"GET", "/volumes/{}", ACCESS_MEMBER, h_e2b_volume_get},
    {"DELETE", "/volumes/{}", ACCESS_MEMBER, h_volume_delete},
    {"POST", "/v2/sandboxes/{}/connect", ACCESS_MEMBER, h_e2b_connect},
    /* The path of E2B's spec, which SDK 2.45 calls; 2.51 calls the /v2 one. */
    {"POST", "/sandboxes/{}/connect", ACCESS_MEMBER, h_e2b_connect},
    {"GET", "/templates", ACCESS_MEMBER, h_e2b_templates},
    {"GET", "/templates/aliases/{}", ACCESS_MEMBER, h_e2b_template_alias},
    /* The volume file API (E2B's spec/openapi-volumecontent.yml, decision
     * 0071), with the volume's token. */
    {"GET", "/volumecontent/{}/path", ACCESS_VOLUME, h_volume_content},
    {"PATCH", "/volumecontent/{}/path", ACCESS_VOLUME, h_volume_content},
    {"DELETE", "/volumecontent/{}/path", ACCESS_VOLUME, h_volume_content},
    {"GET", "/volumecontent/{}/dir", ACCESS_VOLUME, h_volume_content},
    {"POST", "/volumecontent/{}/dir", ACCESS_VOLUME, h_volume_content},
    {"GET", "/volumecontent/{}/file", ACCESS_VOLUME, h_volume_content},
    {"PUT", "/volumecontent/{}/file", ACCESS_VOLUME, h_volume_content},
    /* The rest of E2B's spec answers 501 from e2b_routes.c's table. */
};

/* 1 when path matches pattern; captures "{}" segments into req->params. */
static int match(const char *pattern, const char *path, struct request *req)
{
    int nparam = 0;

    while (*pattern && *path) {
        if (pattern[0] == '*' && pattern[1] == '\0')
            return 1;
        if (pattern[0] == '{' && pattern[1] == '}') {
            size_t n = strcspn(path, "/");
            if (n == 0 || n >= sizeof(req->params[0]) || nparam >= REQUEST_MAX_PARAMS)
                return 0;
            memcpy(req->params[nparam], path, n);
            req->params[nparam++][n] = '\0';
            path += n;
            pattern += 2;
            continue;
        }
        if (*pattern++ != *path++)
            return 0;
    }
    return (*pattern == '\0' || strcmp(pattern, "*") == 0) && *path == '\0';
}

static const char *credential(struct request *req)
{
    const char *auth = request_header(req, "HTTP_AUTHORIZATION");
    const char *key = request_header(req, "HTTP_X_API_KEY");

    if (auth && strncmp(auth, "Bearer ", 7) == 0)
        return auth + 7;
    return key && *key ? key : NULL;
}

/* Every request of a verified credential counts, whatever its route or role
 * (a worker's long-poll counts once, when it arrives). Only verified ones: a
 * wrong secret under this key's public id must not spend its budget. A
 * failing Redis lets the request through: the verification just succeeded,
 * and refusing would turn a blip into an outage. 0 go on, -1 answered 429. */
static int within_budget(struct request *req)
{
    long retry_ms = 0;
    char secs[24];
    int taken =
        ratelimit_take(req->rc, &req->cred, req->conf->key_rate, req->conf->key_burst, &retry_ms);

    if (taken != 0)
        return 0;
    snprintf(secs, sizeof(secs), "%ld", (retry_ms + 999) / 1000);
    respond_add_header(req, "Retry-After", secs);
    respond_error(req, 429,
                  "rate limit of this %s exceeded (%ld requests/s, burst %ld); retry in %s s",
                  req->cred.kind == TOKEN_JOIN     ? "join token"
                  : req->cred.kind == TOKEN_VOLUME ? "volume"
                                                   : "API key",
                  req->conf->key_rate, req->conf->key_burst, secs);
    return -1;
}

/* The volume file API takes the volume's token and nothing else: the SDK
 * sends only it, and it opens that one volume (the handler checks which).
 * An API key here is refused like any other wrong token: whoever holds one
 * gets the token from GET /volumes/{id}. Its budget is the volume's. */
static int authorize_volume(struct request *req)
{
    const char *auth = request_header(req, "HTTP_AUTHORIZATION");
    enum volume_token_verdict v;

    if (!auth || strncmp(auth, "Bearer ", 7) != 0) {
        respond_error(req, 401,
                      "missing volume token: send Authorization: Bearer <the token of POST "
                      "/volumes or GET /volumes/{volumeID}>");
        return -1;
    }
    v = volume_token_check(req->conf->server_secret, auth + 7, clock_now_ms() / 1000, &req->cred);
    if (v == VOLUME_TOKEN_EXPIRED) {
        respond_error(req, 401,
                      "volume token expired: get a new one with GET /volumes/{volumeID} "
                      "(Volume.connect)");
        return -1;
    }
    if (v != VOLUME_TOKEN_OK) {
        respond_error(req, 401, "invalid volume token");
        return -1;
    }
    return within_budget(req);
}

/* 0 when the caller may go on; otherwise the answer has been sent. */
static int authorize(struct request *req, enum access access)
{
    const char *text = credential(req);
    int ok;

    if (access == ACCESS_PUBLIC || access == ACCESS_INTERNAL)
        return 0;
    if (access == ACCESS_VOLUME)
        return authorize_volume(req);
    if (!text) {
        respond_error(req, 401,
                      "missing credential: send Authorization: Bearer <key> or X-API-Key");
        return -1;
    }
    token_parse(text, &req->cred);
    /* Kind before validity: a join token is refused here whether or not it is
     * still valid, without a lookup. */
    if (req->cred.kind == TOKEN_JOIN && access != ACCESS_WORKER) {
        respond_error(req, 403, "a join token may only call the worker routes");
        return -1;
    }
    if (req->cred.kind == TOKEN_API_KEY && access == ACCESS_WORKER) {
        respond_error(req, 403, "worker routes take a join token, not an API key");
        return -1;
    }
    if (req->cred.kind == TOKEN_INVALID) {
        respond_error(req, 401, "invalid API key");
        return -1;
    }
    if (access == ACCESS_WORKER) {
        ok = jointoken_verify(req->rc, req->conf->server_secret, &req->cred);
        if (ok == 0)
            respond_error(req, 401, "join token expired, revoked or unknown");
        else if (ok == 1 && within_budget(req) != 0)
            return -1;
    } else {
        ok = apikey_verify(req->rc, req->conf->server_secret, &req->cred, &req->role);
        if (ok == 1)
            audit_actor_key(req->actor, req->cred.id);
        if (ok == 0)
            respond_error(req, 401, "invalid API key");
        else if (ok == 1 && within_budget(req) != 0)
            return -1;
        else if (ok == 1 && access == ACCESS_OWNER && req->role != ROLE_OWNER) {
            respond_error(req, 403, "owner_required");
            return -1;
        }
    }
    if (ok < 0)
        respond_store_down(req);
    return ok == 1 ? 0 : -1;
}

/* Which log field a route's first "{}" fills: the id of the sandbox or worker
 * it acts on. */
static int param_field(const char *pattern)
{
    if (strstr(pattern, "sandboxes/{}") || strstr(pattern, "route/{}"))
        return LOG_SANDBOX;
    if (strstr(pattern, "workers/{}"))
        return LOG_WORKER;
    return -1;
}

/* The context of every line logged for this request from here on: only
 * verified names (a credential's workspace once it checked out) and ids of
 * the right shape. */
static void log_context(const struct request *req, const struct route_match *m)
{
    log_ctx_set(LOG_WORKSPACE, req->cred.ws);
    if (m->param_field >= 0 && token_is_id(req->params[0]))
        log_ctx_set((enum log_field)m->param_field, req->params[0]);
}

/* A route of E2B's spec that Corral does not serve answers 501, never a
 * pretend 404 (which reads as "sandbox not found" in the SDK). Checked before
 * the served table so that a spec path under "/sandboxes/" is not taken for a
 * sandbox id. */
void router_match(struct request *req, struct route_match *m)
{
    int path_matched = 0;

    memset(m, 0, sizeof(*m));
    m->param_field = -1;
    m->spec_route = e2b_unserved_route(req->method, req->path, &path_matched);
    if (m->spec_route) {
        m->outcome = ROUTE_UNSERVED;
        m->access = ACCESS_MEMBER;
        return;
    }
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        const struct route *r = &routes[i];
        if (!match(r->pattern, req->path, req))
            continue;
        path_matched = 1;
        if (strcmp(r->method, "*") != 0 && strcmp(r->method, req->method) != 0)
            continue;
        m->outcome = ROUTE_SERVED;
        m->fn = r->fn;
        m->access = r->access;
        m->param_field = param_field(r->pattern);
        return;
    }
    m->outcome = path_matched ? ROUTE_METHOD_NOT_ALLOWED : ROUTE_NOT_FOUND;
}

void router_dispatch(struct request *req)
{
    struct route_match m;

    router_match(req, &m);
    switch (m.outcome) {
    case ROUTE_SERVED:
        if (authorize(req, m.access) == 0) {
            log_context(req, &m);
            m.fn(req);
        }
        break;
    case ROUTE_UNSERVED:
        if (authorize(req, m.access) == 0 && (log_context(req, &m), 1))
            respond_error(req, 501, "%s %s is not served by Corral", req->method, m.spec_route);
        break;
    case ROUTE_METHOD_NOT_ALLOWED:
        respond_error(req, 405, "method %s not allowed on %s", req->method, req->path);
        break;
    case ROUTE_NOT_FOUND:
        respond_error(req, 404, "no route %s %s", req->method, req->path);
        break;
    }
}

/* E2B's health check answers 204 with no body. */
void h_health(struct request *req)
{
    req->quiet = 1; /* load balancers ask every few seconds */
    respond_empty(req, 204);
}
