/*
 * Concurrency model: one thread per connection. A stream (a command's output,
 * a directory watch) is a blocking loop on its own thread, so it can never
 * hold up another request, and each handler is plain sequential code. The
 * threads are few (the SDK keeps a small pool of connections per sandbox),
 * start with a small stack and keep their buffers on the heap.
 *
 * The route table is the whole HTTP surface: method, path (or prefix), whether
 * the access token is required, handler.
 */
#include "server.h"
#include "auth.h"
#include "connect_rpc.h"
#include "envd.h"
#include "files_http.h"
#include "http.h"
#include "http_serve.h"
#include "init.h"
#include "lifecycle_log.h"

#include <stdlib.h>
#include <string.h>

#define IDLE_TIMEOUT_MS (120 * 1000)
#define IO_TIMEOUT_S 300

enum route_auth {
    AUTH_NONE,    /* /health */
    AUTH_TOKEN,   /* X-Access-Token when the sandbox is secure */
    AUTH_HANDLER, /* /files: the token or a signed URL, checked by the handler */
    AUTH_INIT     /* /init: the init secret, checked by the handler; served while warm */
};

struct route {
    const char *method;
    const char *path;
    int prefix;
    enum route_auth auth;
    void (*handler)(struct http_req *r);
};

static void handle_health(struct http_req *r)
{
    http_send_head(r, 204, NULL, 0, NULL);
}

static void handle_envs(struct http_req *r);

static const struct route routes[] = {
    {"GET", "/health", 0, AUTH_NONE, handle_health},
    {"POST", "/init", 0, AUTH_INIT, init_handle},
    {"GET", "/files", 0, AUTH_HANDLER, files_get},
    {"POST", "/files", 0, AUTH_HANDLER, files_post},
    {"GET", "/envs", 0, AUTH_TOKEN, handle_envs},
    {"POST", "/process.Process/", 1, AUTH_TOKEN, rpc_dispatch},
    {"POST", "/filesystem.Filesystem/", 1, AUTH_TOKEN, rpc_dispatch},
};

extern char **environ;

/* The environment every process starts from (E2B's GET /envs). */
static void handle_envs(struct http_req *r)
{
    json_t *o = json_object();
    char *s;

    for (char **e = environ; *e != NULL; e++) {
        char *eq = strchr(*e, '=');
        char key[256];
        if (eq == NULL || eq - *e >= (long)sizeof(key))
            continue;
        memcpy(key, *e, (size_t)(eq - *e));
        key[eq - *e] = '\0';
        json_object_set_new(o, key, json_str_lossy(eq + 1));
    }
    s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (s == NULL) {
        http_send_error(r, 500, "cannot encode the environment");
        return;
    }
    http_send_body(r, 200, "application/json", s, strlen(s));
    free(s);
}

static const struct route *find_route(const struct http_req *r, int *method_mismatch)
{
    *method_mismatch = 0;
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        const struct route *rt = &routes[i];
        int match = rt->prefix ? strncmp(r->path, rt->path, strlen(rt->path)) == 0
                               : strcmp(r->path, rt->path) == 0;
        if (!match)
            continue;
        if (strcmp(rt->method, r->method) == 0)
            return rt;
        *method_mismatch = 1;
    }
    return NULL;
}

static void serve_request(struct http_req *r)
{
    int wrong_method;
    const struct route *rt = find_route(r, &wrong_method);

    if (rt == NULL) {
        if (wrong_method)
            http_send_error(r, 405, "method %s not allowed on %s", r->method, r->path);
        else
            http_send_error(r, 404, "no route for %s %s", r->method, r->path);
        return;
    }
    /* A warm sandbox belongs to nobody yet (decision 0082). */
    if (init_pending() && rt->auth != AUTH_NONE && rt->auth != AUTH_INIT) {
        http_send_error(r, 503, "sandbox not claimed");
        return;
    }
    if (rt->auth == AUTH_TOKEN && !auth_token_ok(r)) {
        static const char rpc_unauth[] = "{\"code\":\"unauthenticated\",\"message\":"
                                         "\"unauthorized access, please provide a valid access "
                                         "token\"}";
        /* Connect clients read the code from the body; plain HTTP clients the status. */
        if (rt->handler == rpc_dispatch)
            http_send_body(r, 401, "application/json", rpc_unauth, sizeof(rpc_unauth) - 1);
        else
            http_send_error(r, 401, "unauthorized access, please provide a valid access token");
        return;
    }
    rt->handler(r);
}

int server_run(const char *addr, int port)
{
    char err[160];
    int lfd = http_listen(addr, port, err, sizeof(err));

    if (lfd < 0) {
        envd_log("%s", err);
        return -1;
    }
    lifecycle_envd_started(addr, port);
    http_serve_forever(lfd, serve_request, IDLE_TIMEOUT_MS, IO_TIMEOUT_S, envd_log);
    return -1;
}
