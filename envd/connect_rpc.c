/*
 * Connect RPC over HTTP/1.1. The method table below is the whole RPC surface of
 * envd: who can call what is visible in one place. Every method runs as the
 * user chosen by the Authorization header (Basic "<user>:"), or the default
 * user; the access token was checked by the server before we get here.
 */
#include "connect_rpc.h"
#include "connect_parse.h"
#include "envd.h"
#include "filesystem_service.h"
#include "process_service.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RPC_MAX_REQUEST (64 * 1024 * 1024)

enum rpc_kind { RPC_UNARY, RPC_STREAM };

struct rpc_method {
    const char *path;
    enum rpc_kind kind;
    rpc_unary_fn unary;
    rpc_stream_fn stream;
};

static const struct rpc_method rpc_methods[] = {
    {"/process.Process/Start", RPC_STREAM, NULL, process_start},
    {"/process.Process/Connect", RPC_STREAM, NULL, process_connect},
    {"/process.Process/List", RPC_UNARY, process_list, NULL},
    {"/process.Process/SendInput", RPC_UNARY, process_send_input, NULL},
    {"/process.Process/SendSignal", RPC_UNARY, process_send_signal, NULL},
    {"/process.Process/CloseStdin", RPC_UNARY, process_close_stdin, NULL},
    {"/process.Process/Update", RPC_UNARY, process_update, NULL},
    {"/filesystem.Filesystem/Stat", RPC_UNARY, fs_stat, NULL},
    {"/filesystem.Filesystem/MakeDir", RPC_UNARY, fs_make_dir, NULL},
    {"/filesystem.Filesystem/Move", RPC_UNARY, fs_move, NULL},
    {"/filesystem.Filesystem/ListDir", RPC_UNARY, fs_list_dir, NULL},
    {"/filesystem.Filesystem/Remove", RPC_UNARY, fs_remove, NULL},
    {"/filesystem.Filesystem/WatchDir", RPC_STREAM, NULL, fs_watch_dir},
    {"/filesystem.Filesystem/CreateWatcher", RPC_UNARY, fs_create_watcher, NULL},
    {"/filesystem.Filesystem/GetWatcherEvents", RPC_UNARY, fs_get_watcher_events, NULL},
    {"/filesystem.Filesystem/RemoveWatcher", RPC_UNARY, fs_remove_watcher, NULL},
};

int rpc_code_status(const char *code)
{
    static const struct {
        const char *code;
        int status;
    } map[] = {
        {"canceled", 499},
        {"unknown", 500},
        {"invalid_argument", 400},
        {"deadline_exceeded", 504},
        {"not_found", 404},
        {"already_exists", 409},
        {"permission_denied", 403},
        {"resource_exhausted", 429},
        {"failed_precondition", 400},
        {"aborted", 409},
        {"out_of_range", 400},
        {"unimplemented", 501},
        {"internal", 500},
        {"unavailable", 503},
        {"data_loss", 500},
        {"unauthenticated", 401},
    };

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i].code, code) == 0)
            return map[i].status;
    return 500;
}

void rpc_fail(struct rpc_error *e, const char *code, const char *fmt, ...)
{
    va_list ap;

    e->code = code;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
}

void rpc_fail_errno(struct rpc_error *e, int err, const char *fmt, ...)
{
    va_list ap;
    char prefix[900];

    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    switch (err) {
    case ENOENT:
        e->code = "not_found";
        break;
    case EACCES:
    case EPERM:
    case EROFS:
        e->code = "permission_denied";
        break;
    case EEXIST:
    case ENOTEMPTY:
        e->code = "already_exists";
        break;
    case ENOTDIR:
    case EISDIR:
    case EINVAL:
    case ENAMETOOLONG:
        e->code = "invalid_argument";
        break;
    case ELOOP:
        e->code = "failed_precondition";
        break;
    case ENOSPC:
    case EDQUOT:
        e->code = "resource_exhausted";
        break;
    default:
        e->code = "internal";
        break;
    }
    snprintf(e->message, sizeof(e->message), "%s: %s", prefix, strerror(err));
}

json_t *json_str_lossy(const char *s)
{
    json_t *j = json_string(s);
    char *copy;
    size_t n;

    if (j != NULL)
        return j;
    /* Not UTF-8 (file names can be anything): replace bytes >= 0x80 with '?'. */
    n = strlen(s);
    copy = malloc(n + 1);
    if (copy == NULL)
        return json_string("");
    for (size_t i = 0; i <= n; i++)
        copy[i] = (unsigned char)s[i] >= 0x80 ? '?' : s[i];
    j = json_string(copy);
    free(copy);
    return j;
}

int json_get_u32(json_t *obj, const char *key, unsigned long def, unsigned long *out)
{
    json_t *v = json_object_get(obj, key);
    char *end;

    *out = def;
    if (v == NULL || json_is_null(v))
        return 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 0xffffffffLL) {
        *out = (unsigned long)json_integer_value(v);
        return 0;
    }
    if (json_is_string(v)) {
        unsigned long long x = strtoull(json_string_value(v), &end, 10);
        if (*end == '\0' && end != json_string_value(v) && x <= 0xffffffffULL) {
            *out = (unsigned long)x;
            return 0;
        }
    }
    return -1;
}

const char *json_get_str(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);

    return json_is_string(v) ? json_string_value(v) : NULL;
}

int json_get_bool(json_t *obj, const char *key, int def)
{
    json_t *v = json_object_get(obj, key);

    return json_is_boolean(v) ? json_is_true(v) : def;
}

static void send_unary_error(struct http_req *r, const struct rpc_error *e)
{
    json_t *o = json_object();
    char *s;

    json_object_set_new(o, "code", json_string(e->code));
    json_object_set_new(o, "message", json_str_lossy(e->message));
    s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    http_send_body(r, rpc_code_status(e->code), "application/json", s ? s : "{}",
                   s ? strlen(s) : 2);
    free(s);
}

char *rpc_encode_frame(json_t *msg, size_t *len)
{
    char *body = json_dumps(msg, JSON_COMPACT);
    size_t n;
    char *frame;
    uint32_t be;

    if (body == NULL)
        return NULL;
    n = strlen(body);
    frame = malloc(n + 5);
    if (frame != NULL) {
        frame[0] = 0;
        be = htonl((uint32_t)n);
        memcpy(frame + 1, &be, 4);
        memcpy(frame + 5, body, n);
        *len = n + 5;
    }
    free(body);
    return frame;
}

int rpc_stream_send_frame(struct rpc_call *call, const char *frame, size_t len)
{
    if (call->stream_broken)
        return -1;
    if (http_send_chunk(call->req, frame, len) < 0) {
        call->stream_broken = 1;
        return -1;
    }
    return 0;
}

int rpc_stream_send(struct rpc_call *call, json_t *msg)
{
    size_t len;
    char *frame = rpc_encode_frame(msg, &len);
    int rc;

    json_decref(msg);
    if (frame == NULL) {
        call->stream_broken = 1;
        return -1;
    }
    rc = rpc_stream_send_frame(call, frame, len);
    free(frame);
    return rc;
}

int rpc_stream_wait(struct rpc_call *call, int fd, long long *next_keepalive_ms)
{
    for (;;) {
        long long now = envd_now_ms();
        long long until = *next_keepalive_ms;
        struct pollfd pfd[2] = {
            {.fd = call->req->c->fd, .events = POLLIN | POLLRDHUP},
            {.fd = fd, .events = POLLIN},
        };
        int rc;

        if (call->deadline_ms > 0 && call->deadline_ms < until)
            until = call->deadline_ms;
        rc = poll(pfd, fd >= 0 ? 2 : 1, until > now ? (int)(until - now) : 0);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0 || (pfd[0].revents != 0)) {
            call->stream_broken = 1;
            return -1;
        }
        if (fd >= 0 && pfd[1].revents != 0)
            return 1;
        now = envd_now_ms();
        if (call->deadline_ms > 0 && now >= call->deadline_ms) {
            rpc_fail(&call->err, "deadline_exceeded", "deadline exceeded");
            return -2;
        }
        if (now >= *next_keepalive_ms)
            return 0;
    }
}

static const struct rpc_method *find_method(const char *path)
{
    for (size_t i = 0; i < sizeof(rpc_methods) / sizeof(rpc_methods[0]); i++)
        if (strcmp(rpc_methods[i].path, path) == 0)
            return &rpc_methods[i];
    return NULL;
}

static void read_call_headers(struct rpc_call *call)
{
    rpc_call_headers_parse(http_header(call->req, "Connect-Timeout-Ms"),
                           http_header(call->req, "Keepalive-Ping-Interval"), envd_now_ms(),
                           &call->deadline_ms, &call->keepalive_ms);
}

static void finish_stream(struct rpc_call *call)
{
    json_t *end = json_object();
    size_t len;
    char *frame;

    if (call->stream_broken) {
        call->req->keep_alive = 0;
        json_decref(end);
        return;
    }
    if (call->err.code != NULL)
        json_object_set_new(end, "error",
                            json_pack("{s:s,s:o}", "code", call->err.code, "message",
                                      json_str_lossy(call->err.message)));
    frame = rpc_encode_frame(end, &len);
    json_decref(end);
    if (frame == NULL || (frame[0] = 2, http_send_chunk(call->req, frame, len) < 0) ||
        http_end_chunks(call->req) < 0)
        call->req->keep_alive = 0;
    free(frame);
}

static void run_stream(struct rpc_call *call, const struct rpc_method *m, json_t *in)
{
    if (http_send_head(call->req, 200, "application/connect+json", -1, NULL) < 0) {
        call->req->keep_alive = 0;
        return;
    }
    if (in != NULL)
        m->stream(call, in);
    finish_stream(call);
}

static void run_unary(struct rpc_call *call, const struct rpc_method *m, json_t *in)
{
    json_t *out = in ? m->unary(call, in) : NULL;
    char *s;

    if (out == NULL) {
        if (call->err.code == NULL)
            rpc_fail(&call->err, "internal", "internal error");
        send_unary_error(call->req, &call->err);
        return;
    }
    s = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    if (s == NULL) {
        rpc_fail(&call->err, "internal", "cannot encode response");
        send_unary_error(call->req, &call->err);
        return;
    }
    http_send_body(call->req, 200, "application/json", s, strlen(s));
    free(s);
}

void rpc_dispatch(struct http_req *r)
{
    const struct rpc_method *m = find_method(r->path);
    struct rpc_call *call;
    const char *ct = http_header(r, "Content-Type");
    char *body = NULL;
    size_t len = 0;
    json_t *in = NULL;
    char msg[300];

    if (m == NULL) {
        http_send_error(r, 404, "unknown method %s", r->path);
        return;
    }
    if (!rpc_content_type_is(ct, m->kind == RPC_STREAM ? "application/connect+json"
                                                       : "application/json")) {
        http_send_error(r, 415, "unsupported content type %s (only the JSON codec is served)",
                        ct ? ct : "(none)");
        return;
    }
    call = calloc(1, sizeof(*call));
    if (call == NULL) {
        http_send_error(r, 500, "out of memory");
        return;
    }
    call->req = r;
    read_call_headers(call);
    int rc = http_body_read_all(r, &body, &len, RPC_MAX_REQUEST);
    if (rc < 0) {
        r->keep_alive = 0;
        rpc_fail(&call->err, rc == -2 ? "resource_exhausted" : "invalid_argument",
                 rc == -2 ? "request too large" : "cannot read request body");
    } else if (users_from_authorization(http_header(r, "Authorization"), &call->user, msg,
                                        sizeof(msg)) < 0) {
        rpc_fail(&call->err, "unauthenticated", "%s", msg);
    } else {
        in = rpc_parse_message(&call->err, body, len, m->kind == RPC_STREAM);
    }
    free(body);
    if (m->kind == RPC_STREAM)
        run_stream(call, m, in);
    else
        run_unary(call, m, in);
    json_decref(in);
    free(call);
}
