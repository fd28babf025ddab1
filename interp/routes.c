#include "routes.h"

#include "contexts.h"
#include "env_code.h"
#include "token.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BODY_MAX (16 << 20)

/* The request's JSON body, an object; NULL after answering 400. */
static json_t *body_object(struct http_req *r)
{
    char *text = NULL;
    size_t len = 0;
    json_t *v;
    int rc = http_body_read_all(r, &text, &len, BODY_MAX);

    if (rc != 0) {
        http_send_error(r, rc == -2 ? 413 : 400,
                        rc == -2 ? "the body is over 16 MiB" : "the body could not be read");
        free(text);
        return NULL;
    }
    v = len ? json_loadb(text, len, 0, NULL) : json_object();
    free(text);
    if (!json_is_object(v)) {
        json_decref(v);
        http_send_error(r, 400, "the body is not a JSON object");
        return NULL;
    }
    return v;
}

/* A member that must be a string when present: 0 (*out NULL when absent),
 * or -1 after answering 400. */
static int string_of(struct http_req *r, const json_t *o, const char *name, const char **out)
{
    const json_t *v = json_object_get(o, name);

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v)) {
        http_send_error(r, 400, "%s must be a string", name);
        return -1;
    }
    *out = json_string_value(v);
    return 0;
}

static int send_json(struct http_req *r, int status, json_t *v)
{
    char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
    int rc = text ? http_send_body(r, status, "application/json", text, strlen(text))
                  : http_send_error(r, 500, "out of memory");

    free(text);
    json_decref(v);
    return rc;
}

/* A line of the answer, flushed as its own chunk: -1 once the client has
 * gone (the execution is interrupted then). */
static int emit_line(void *ud, json_t *line)
{
    struct http_req *r = ud;
    char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
    size_t n = text ? strlen(text) : 0;
    int rc = -1;

    if (text) {
        text[n] = '\n'; /* json_dumps's NUL, replaced: the line's end */
        rc = http_send_chunk(r, text, n + 1);
    }
    free(text);
    json_decref(line);
    return rc == 0 ? 0 : -1;
}

/* The client closed its end (or reset it): nobody reads the answer. */
static int client_gone(void *ud)
{
    const struct http_req *r = ud;
    struct pollfd p = {.fd = r->c->fd, .events = POLLRDHUP};

    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* The cell in c, between its env vars' set and restore code (either may be
 * NULL), its lines streamed. */
static void run_in(struct http_req *r, struct context *c, const char *code, const char *set,
                   const char *restore)
{
    char err[256];

    if (http_send_head(r, 200, "application/x-ndjson", -1, NULL) != 0)
        return;
    if ((set && kernel_run_silent(&c->k, set, err, sizeof(err)) != 0) ||
        kernel_execute(&c->k, code, emit_line, client_gone, r, err, sizeof(err)) != 0)
        emit_line(r, json_pack("{s:s, s:s, s:s, s:s}", "type", "error", "name", "KernelError",
                               "value", err, "traceback", ""));
    if (restore && c->k.pid > 0)
        kernel_run_silent(&c->k, restore, err, sizeof(err));
    http_end_chunks(r);
}

static void execute(struct http_req *r)
{
    json_t *body = body_object(r), *vars;
    const char *code, *ctx_id, *lang;
    char *set = NULL, *restore = NULL, err[256];
    struct context *c;
    int status;

    if (!body)
        return;
    if (string_of(r, body, "code", &code) || string_of(r, body, "context_id", &ctx_id) ||
        string_of(r, body, "language", &lang))
        goto done;
    if (!code || (ctx_id && lang)) {
        http_send_error(r, 400,
                        code ? "give context_id or language, not both" : "code is required");
        goto done;
    }
    c = contexts_acquire(ctx_id, lang ? lang : "python", &status, err, sizeof(err));
    if (!c) {
        http_send_error(r, status, "%s", err);
        goto done;
    }
    vars = json_object_get(body, "env_vars");
    if (vars && !json_is_null(vars) && json_object_size(vars) > 0 &&
        (!(set = env_code_set(c->k.lang, vars, err, sizeof(err))) ||
         !(restore = env_code_restore(c->k.lang))))
        http_send_error(r, 400, "%s", err);
    else
        run_in(r, c, code, set, restore);
    contexts_release(c);
done:
    free(set);
    free(restore);
    json_decref(body);
}

/* Running code needs the sandbox's access token, as envd's routes do. The
 * context routes do not: the package sends them without it (decision 0088). */
static void authorized_execute(struct http_req *r)
{
    if (token_ok(http_header(r, "X-Access-Token")))
        execute(r);
    else
        http_send_error(r, 401, "X-Access-Token is missing or wrong");
}

static void create_context(struct http_req *r)
{
    json_t *body = body_object(r), *info = NULL;
    const char *lang, *cwd;
    char err[256];
    int status;

    if (!body)
        return;
    if (string_of(r, body, "language", &lang) == 0 && string_of(r, body, "cwd", &cwd) == 0) {
        if (contexts_create(lang ? lang : "python", cwd, &info, &status, err, sizeof(err)) == 0)
            send_json(r, 200, info);
        else
            http_send_error(r, status, "%s", err);
    }
    json_decref(body);
}

/* "/contexts/<32 hex>" then rest ("" or "/restart"): the id in out, or 0. */
static int context_path(const char *path, const char *rest, char out[CONTEXT_ID_HEX + 1])
{
    const char *p = path + strlen("/contexts/");

    if (strncmp(path, "/contexts/", strlen("/contexts/")) != 0 ||
        strlen(p) != CONTEXT_ID_HEX + strlen(rest) || strcmp(p + CONTEXT_ID_HEX, rest) != 0)
        return 0;
    for (int i = 0; i < CONTEXT_ID_HEX; i++)
        if (!strchr("0123456789abcdef", p[i]) || !p[i])
            return 0;
    memcpy(out, p, CONTEXT_ID_HEX);
    out[CONTEXT_ID_HEX] = '\0';
    return 1;
}

static void context_route(struct http_req *r)
{
    char id[CONTEXT_ID_HEX + 1], err[256];

    if (strcmp(r->method, "DELETE") == 0 && context_path(r->path, "", id)) {
        if (contexts_remove(id) == 0)
            http_send_head(r, 204, NULL, 0, NULL);
        else
            http_send_error(r, 404, "context %s not found", id);
    } else if (strcmp(r->method, "POST") == 0 && context_path(r->path, "/restart", id)) {
        if (contexts_restart(id, err, sizeof(err)) == 0)
            http_send_head(r, 204, NULL, 0, NULL);
        else
            http_send_error(r, strstr(err, "not found") ? 404 : 503, "%s", err);
    } else {
        http_send_error(r, 404, "no route %s %s", r->method, r->path);
    }
}

void routes_serve(struct http_req *r)
{
    if (strcmp(r->path, "/health") == 0 && strcmp(r->method, "GET") == 0)
        http_send_body(r, 200, "text/plain", "OK", 2);
    else if (strcmp(r->path, "/execute") == 0 && strcmp(r->method, "POST") == 0)
        authorized_execute(r);
    else if (strcmp(r->path, "/contexts") == 0 && strcmp(r->method, "POST") == 0)
        create_context(r);
    else if (strcmp(r->path, "/contexts") == 0 && strcmp(r->method, "GET") == 0)
        send_json(r, 200, contexts_list());
    else
        context_route(r);
}
