#include "docker_exec.h"

#include "containers.h"

#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXEC_CALL_MS 30000L
#define LINE_MAX_BYTES 4096

void exec_tail(const char *out, size_t len, char *tail, size_t taillen)
{
    size_t start = len > EXEC_TAIL_MAX ? len - EXEC_TAIL_MAX : 0, n;
    const char *nl;

    while (len > start && (out[len - 1] == '\n' || out[len - 1] == '\r'))
        len--;
    if (start > 0 && (nl = memchr(out + start, '\n', len - start)) != NULL)
        start = (size_t)(nl - out) + 1;
    n = len - start < taillen - 1 ? len - start : taillen - 1;
    memcpy(tail, out + start, n);
    tail[n] = '\0';
}

/* POST /containers/{ctr}/exec; attach: its output comes with its start. */
static int exec_create(struct docker *d, const char *ctr, const struct exec_spec *s, int attach,
                       char *id, char *err, size_t errlen)
{
    json_t *body = json_pack("{s:b, s:b, s:O}", "AttachStdout", attach, "AttachStderr", attach,
                             "Cmd", s->cmd),
           *ans = NULL;
    char path[512];
    long status = 0;
    int rc;

    if (!body) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    if (s->user && *s->user)
        json_object_set_new(body, "User", json_string(s->user));
    if (s->workdir && *s->workdir)
        json_object_set_new(body, "WorkingDir", json_string(s->workdir));
    /* An exec inherits the container's variables, envd's token among them
     * (envd drops it from its own): a command of the tenant's never sees it. */
    json_object_set_new(body, "Env", json_pack("[s]", ENVD_TOKEN_ENV "="));
    if (s->env)
        json_array_extend(json_object_get(body, "Env"), s->env);
    snprintf(path, sizeof(path), "/containers/%s/exec", ctr);
    rc = docker_call(d, "POST", path, body, EXEC_CALL_MS, &status, &ans, err, errlen);
    json_decref(body);
    if (rc != 0)
        return -1;
    if (status != 201 || !json_string_value(json_object_get(ans, "Id"))) {
        snprintf(err, errlen, "exec: %.200s", docker_errmsg(ans, status));
        json_decref(ans);
        return 1;
    }
    snprintf(id, 65, "%s", json_string_value(json_object_get(ans, "Id")));
    json_decref(ans);
    return 0;
}

int docker_exec_detached(struct docker *d, const char *ctr, const struct exec_spec *s, char *id,
                         char *err, size_t errlen)
{
    json_t *body = json_pack("{s:b, s:b}", "Detach", 1, "Tty", 0), *ans = NULL;
    char path[256];
    long status = 0;
    int rc = exec_create(d, ctr, s, 0, id, err, errlen);

    if (rc == 0) {
        snprintf(path, sizeof(path), "/exec/%s/start", id);
        rc = docker_call(d, "POST", path, body, EXEC_CALL_MS, &status, &ans, err, errlen);
        if (rc == 0 && status != 200 && status != 204) {
            snprintf(err, errlen, "exec start: %.200s", docker_errmsg(ans, status));
            rc = 1;
        }
    }
    json_decref(body);
    json_decref(ans);
    return rc;
}

int docker_exec_status(struct docker *d, const char *id, int *running, int *code, char *err,
                       size_t errlen)
{
    char path[256];
    long status = 0;
    json_t *ans = NULL;

    snprintf(path, sizeof(path), "/exec/%s/json", id);
    if (docker_call(d, "GET", path, NULL, EXEC_CALL_MS, &status, &ans, err, errlen) != 0)
        return -1;
    if (status != 200) {
        snprintf(err, errlen, "exec inspect: %.200s", docker_errmsg(ans, status));
        json_decref(ans);
        return -1;
    }
    *running = json_is_true(json_object_get(ans, "Running"));
    *code = (int)json_integer_value(json_object_get(ans, "ExitCode"));
    json_decref(ans);
    return 0;
}

/* The attached output as it comes: frames (8-byte header, then payload)
 * into lines, and the whole output's last bytes. */
struct out_sink {
    unsigned char hdr[8];
    size_t hdr_have, payload_left;
    char line[LINE_MAX_BYTES];
    size_t line_len;
    char last[EXEC_TAIL_MAX * 2];
    size_t last_len;
    exec_line_fn fn;
    void *ud;
};

static void flush_line(struct out_sink *o)
{
    o->line[o->line_len] = '\0';
    if (o->fn)
        o->fn(o->ud, o->line);
    o->line_len = 0;
}

static void take_byte(struct out_sink *o, char c)
{
    if (o->last_len == sizeof(o->last)) { /* keep the newer half */
        memmove(o->last, o->last + EXEC_TAIL_MAX, EXEC_TAIL_MAX);
        o->last_len = EXEC_TAIL_MAX;
    }
    o->last[o->last_len++] = c;
    if (c == '\n' || o->line_len == LINE_MAX_BYTES - 1)
        flush_line(o);
    if (c != '\n')
        o->line[o->line_len++] = c;
}

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
    struct out_sink *o = ud;
    size_t total = size * n;

    for (size_t i = 0; i < total; i++) {
        if (o->payload_left == 0) {
            o->hdr[o->hdr_have++] = (unsigned char)p[i];
            if (o->hdr_have == 8) {
                o->payload_left = (size_t)o->hdr[4] << 24 | (size_t)o->hdr[5] << 16 |
                                  (size_t)o->hdr[6] << 8 | o->hdr[7];
                o->hdr_have = 0;
            }
            continue;
        }
        o->payload_left--;
        take_byte(o, p[i]);
    }
    return total;
}

/* The exit code once dockerd has seen the process end (its stream closes
 * just before). 0, or -1. */
static int exit_code(struct docker *d, const char *id, int *code, char *err, size_t errlen)
{
    int running = 1;

    for (int i = 0; i < 50; i++) {
        if (docker_exec_status(d, id, &running, code, err, errlen) != 0)
            return -1;
        if (!running)
            return 0;
        clock_sleep_ms(20);
    }
    snprintf(err, errlen, "exec: still running after its output ended");
    return -1;
}

int docker_exec_run(struct docker *d, const char *ctr, const struct exec_spec *s, long timeout_ms,
                    exec_line_fn line, void *ud, int *code, char *tail, char *err, size_t errlen)
{
    struct out_sink *o = calloc(1, sizeof(*o));
    json_t *body = json_pack("{s:b, s:b}", "Detach", 0, "Tty", 0);
    struct docker_req r = {.body = body, .sink = sink, .ud = o};
    char id[65], path[256], *buf = NULL;
    int64_t t0 = clock_now_ms();
    long status = 0;
    size_t len = 0;
    int rc = o && body ? exec_create(d, ctr, s, 1, id, err, errlen) : 1;

    tail[0] = '\0';
    if (rc == 0) {
        o->fn = line;
        o->ud = ud;
        snprintf(path, sizeof(path), "/exec/%s/start", id);
        rc = docker_request(d, "POST", path, &r, timeout_ms, &status, &buf, &len, err, errlen);
        free(buf);
        if (o->line_len > 0)
            flush_line(o);
        exec_tail(o->last, o->last_len, tail, EXEC_TAIL_MAX + 1);
        if (rc != 0 && clock_now_ms() - t0 >= timeout_ms)
            rc = 2;
        else if (rc == 0 && status != 200) {
            snprintf(err, errlen, "exec start: dockerd answered %ld", status);
            rc = 1;
        } else if (rc == 0) {
            rc = exit_code(d, id, code, err, errlen);
        }
    }
    free(o);
    json_decref(body);
    return rc;
}
