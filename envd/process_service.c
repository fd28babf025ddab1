/*
 * Process RPCs. Start streams start, data and end events of a new process;
 * Connect re-attaches to a running one (later output only, as E2B's envd).
 * A stream that loses its client leaves the process running; a Start with
 * Connect-Timeout-Ms kills the process at that deadline (the pump does it, so
 * it happens even when nobody is attached any more).
 */
#include "process_service.h"
#include "env_parse.h"
#include "envd.h"
#include "gate.h"
#include "lifecycle_log.h"
#include "paths.h"
#include "process.h"
#include "process_parse.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static int resolve_cwd(struct rpc_call *call, json_t *config, char *out, size_t n)
{
    const char *cwd = json_get_str(config, "cwd");
    char msg[512];
    struct stat st;

    if (path_resolve(cwd ? cwd : "", &call->user, out, n, msg, sizeof(msg)) < 0) {
        rpc_fail(&call->err, "invalid_argument", "%s", msg);
        return -1;
    }
    if (stat(out, &st) < 0 || !S_ISDIR(st.st_mode)) {
        rpc_fail(&call->err, "invalid_argument", "cwd '%s' does not exist", out);
        return -1;
    }
    return 0;
}

/* Delivers the process's frames to the client until the end event, a deadline or a
 * disconnect. */
static int stream_process(struct rpc_call *call, struct proc *p, struct proc_sub *sub)
{
    long long next_keepalive = envd_now_ms() + call->keepalive_ms;

    for (;;) {
        struct proc_frame *f;
        while ((f = proc_sub_pop(p, sub)) != NULL) {
            int end = f->is_end;
            int rc;
            /* The pump kills the process at the deadline, so its end event can
             * arrive before the wait below sees the deadline: it is the deadline. */
            if (end && call->deadline_ms > 0 && envd_now_ms() >= call->deadline_ms) {
                proc_frame_unref(f);
                rpc_fail(&call->err, "deadline_exceeded", "deadline exceeded");
                return -1;
            }
            rc = rpc_stream_send_frame(call, f->data, f->len);
            proc_frame_unref(f);
            if (rc < 0)
                return -1;
            if (end)
                return 0;
            next_keepalive = envd_now_ms() + call->keepalive_ms;
        }
        int ready = rpc_stream_wait(call, sub->efd, &next_keepalive);
        if (ready < 0)
            return -1;
        if (ready == 0) {
            if (rpc_stream_send(call, json_pack("{s:{s:{}}}", "event", "keepalive")) < 0)
                return -1;
            next_keepalive = envd_now_ms() + call->keepalive_ms;
        }
    }
}

static int send_start(struct rpc_call *call, pid_t pid)
{
    return rpc_stream_send(call,
                           json_pack("{s:{s:{s:I}}}", "event", "start", "pid", (json_int_t)pid));
}

/* The permission gate's say on the command (PTY or not): denied, nothing starts. */
static int gated_exec(struct rpc_call *call, const char **argv, const char *exe,
                      const struct env_list *env, const char *cwd)
{
    char msg[1024];
    const char *home = env_list_get(env, "HOME");

    if (gate_exec((char *const *)argv, exe, cwd, home ? home : call->user.home, msg, sizeof(msg)) ==
        0)
        return 0;
    rpc_fail(&call->err, "permission_denied", "%s", msg);
    return -1;
}

static struct proc *spawn_from_request(struct rpc_call *call, json_t *in, struct proc_sub *sub)
{
    json_t *config = json_object_get(in, "process");
    struct proc_spec spec = {0};
    struct env_list env = {0};
    const char **argv;
    struct proc *p = NULL;
    struct gate_argvec wrapped = {0};
    char msg[600], exe[PATH_MAX];

    if (!json_is_object(config)) {
        rpc_fail(&call->err, "invalid_argument", "process is required");
        return NULL;
    }
    argv = process_parse_argv(config, &call->err);
    if (argv == NULL || resolve_cwd(call, config, spec.cwd, sizeof(spec.cwd)) < 0 ||
        process_parse_pty(json_object_get(in, "pty"), &spec, &call->err) < 0)
        goto out;
    if (env_build(&env, environ, &call->user, json_object_get(config, "envs")) < 0) {
        rpc_fail(&call->err, "internal", "cannot build the environment");
        goto out;
    }
    proc_find_executable(argv[0], env.v, exe, sizeof(exe));
    if (gated_exec(call, argv, exe, &env, spec.cwd) < 0)
        goto out;
    /* -os-sandbox bwrap: what runs is bwrap around the command */
    if (gate_wrap_command((char *const *)argv, exe, spec.cwd, &wrapped) < 0) {
        rpc_fail(&call->err, "internal", "cannot build the sandbox's command line");
        goto out;
    }
    spec.user = &call->user;
    spec.config = config;
    spec.argv = wrapped.n > 0 ? wrapped.v : (char **)argv;
    spec.envp = env.v;
    spec.tag = json_get_str(in, "tag");
    /* stdin is optional in the message: absent means on, for older SDKs. */
    spec.stdin_enabled = json_get_bool(in, "stdin", 1);
    spec.deadline_ms = call->deadline_ms;
    p = proc_spawn(&spec, sub, msg, sizeof(msg));
    if (p == NULL)
        rpc_fail(&call->err, "invalid_argument", "%s", msg);
out:
    free(argv);
    gate_argvec_free(&wrapped);
    env_list_free(&env);
    return p;
}

int process_start(struct rpc_call *call, json_t *in)
{
    struct proc_sub *sub = proc_sub_new();
    struct proc *p;
    int rc = -1;

    if (sub == NULL) {
        rpc_fail(&call->err, "internal", "out of memory");
        return -1;
    }
    p = spawn_from_request(call, in, sub);
    if (p == NULL) {
        proc_sub_free(sub);
        return -1;
    }
    lifecycle_process_started(proc_pid(p), proc_config(p), call->user.name);
    if (send_start(call, proc_pid(p)) == 0)
        rc = stream_process(call, p, sub);
    proc_unsubscribe(p, sub);
    proc_unref(p);
    return rc;
}

/* The process named by a ProcessSelector {pid} or {tag}; NULL with err set. */
static struct proc *select_process(struct rpc_call *call, json_t *in)
{
    const char *tag;
    unsigned long pid;
    struct proc *p;

    if (process_parse_selector(json_object_get(in, "process"), &pid, &tag, &call->err) < 0)
        return NULL;
    p = proc_find(pid, tag);
    if (p == NULL) {
        if (pid != 0)
            rpc_fail(&call->err, "not_found", "process with pid %lu not found", pid);
        else
            rpc_fail(&call->err, "not_found", "process with tag %s not found", tag);
    }
    return p;
}

int process_connect(struct rpc_call *call, json_t *in)
{
    struct proc *p = select_process(call, in);
    struct proc_sub *sub;
    int rc = -1;

    if (p == NULL)
        return -1;
    sub = proc_sub_new();
    if (sub == NULL || proc_subscribe(p, sub) < 0) {
        rpc_fail(&call->err, "not_found", "process with pid %d not found", proc_pid(p));
        if (sub != NULL)
            proc_sub_free(sub);
        proc_unref(p);
        return -1;
    }
    if (send_start(call, proc_pid(p)) == 0)
        rc = stream_process(call, p, sub);
    proc_unsubscribe(p, sub);
    proc_unref(p);
    return rc;
}

json_t *process_list(struct rpc_call *call, json_t *in)
{
    (void)call;
    (void)in;
    return proc_list();
}

json_t *process_send_input(struct rpc_call *call, json_t *in)
{
    const char *code = "internal";
    unsigned char *data = NULL;
    size_t len = 0;
    char msg[300];
    struct proc *p;
    int to_pty, rc;

    rc = process_parse_input(json_object_get(in, "input"), &data, &len, &to_pty, &call->err);
    if (rc < 0)
        return NULL;
    p = select_process(call, in);
    if (rc == 0) { /* nothing to write */
        proc_unref(p);
        return p ? json_object() : NULL;
    }
    rc = p ? proc_write_input(p, to_pty, data, len, &code, msg, sizeof(msg)) : -1;
    if (p != NULL && rc < 0)
        rpc_fail(&call->err, code, "%s", msg);
    proc_unref(p);
    free(data);
    return rc == 0 ? json_object() : NULL;
}

json_t *process_send_signal(struct rpc_call *call, json_t *in)
{
    int sig = process_parse_signal(json_object_get(in, "signal"));
    struct proc *p;

    if (sig <= 0 || sig >= NSIG) {
        rpc_fail(&call->err, "invalid_argument", "unsupported signal");
        return NULL;
    }
    p = select_process(call, in);
    if (p == NULL)
        return NULL;
    if (proc_signal(p, sig) < 0 && errno != ESRCH) {
        rpc_fail(&call->err, "internal", "error sending signal: %s", strerror(errno));
        proc_unref(p);
        return NULL;
    }
    proc_unref(p);
    return json_object();
}

json_t *process_close_stdin(struct rpc_call *call, json_t *in)
{
    struct proc *p = select_process(call, in);
    const char *code = "internal";
    char msg[300];
    int rc;

    if (p == NULL)
        return NULL;
    rc = proc_close_stdin(p, &code, msg, sizeof(msg));
    if (rc < 0)
        rpc_fail(&call->err, code, "%s", msg);
    proc_unref(p);
    return rc == 0 ? json_object() : NULL;
}

json_t *process_update(struct rpc_call *call, json_t *in)
{
    struct proc_spec spec = {0};
    const char *code = "internal";
    char msg[300];
    struct proc *p;
    int rc = 0;

    if (process_parse_pty(json_object_get(in, "pty"), &spec, &call->err) < 0)
        return NULL;
    p = select_process(call, in);
    if (p == NULL)
        return NULL;
    if (spec.pty)
        rc = proc_resize(p, spec.cols, spec.rows, &code, msg, sizeof(msg));
    if (rc < 0)
        rpc_fail(&call->err, code, "%s", msg);
    proc_unref(p);
    return rc == 0 ? json_object() : NULL;
}
