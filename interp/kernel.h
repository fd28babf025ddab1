/* kernel.h: one Jupyter kernel a context runs (decision 0088): started with
 * a connection file of its own (ports on 127.0.0.1, a random key), spoken
 * to over ZeroMQ (shell and control: DEALER; iopub: SUB), one execution at a
 * time. */
#ifndef CORRAL_INTERP_KERNEL_H
#define CORRAL_INTERP_KERNEL_H

#include <jansson.h>
#include <limits.h>
#include <sys/types.h>

#define KERNEL_KEY_HEX 64
#define KERNEL_LANG_MAX 16

struct kernel {
    pid_t pid; /* 0: not running */
    void *zctx, *shell, *iopub, *control;
    char key[KERNEL_KEY_HEX + 1];
    char session[33];
    char lang[KERNEL_LANG_MAX];
    char cwd[PATH_MAX];
    char conn_file[PATH_MAX];
    long long seq; /* for message ids */
};

/* Each line of an execution as it comes; -1 when the caller has gone (the
 * kernel is interrupted then). */
typedef int (*kernel_emit_fn)(void *ud, json_t *line);
/* Whether the caller has gone while nothing is written (asked every 100 ms:
 * a cell that prints nothing is interrupted too). */
typedef int (*kernel_gone_fn)(void *ud);

/* Where Corral's own kernels are (default /usr/lib/corral-interp/kernels). */
void kernel_set_dir(const char *dir);

/* What every kernel inherits from the server's environment (its parent's
 * pid, PYTHONPATH with the kernels' directory): set once, before any thread,
 * so that a forked child need not (setenv is not async-signal-safe). */
void kernel_env_init(void);

/* argv of lang's kernel for a connection file ({NULL} when lang has none):
 * python (ipykernel), r (IRkernel), bash, js, ts (Corral's own wrappers). */
const char *const *kernel_argv(const char *lang, const char *conn_file, const char *buf[8]);

/* Starts lang's kernel in cwd with env (NULL-terminated "K=V" strings added
 * to the server's), its files under dir, and waits (up to wait_ms) until it
 * answers kernel_info on shell and iopub. 0, or -1 with err. */
int kernel_start(struct kernel *k, const char *lang, const char *cwd, const char *dir, long wait_ms,
                 char *err, size_t errlen);

/* Runs code: every output as a line through emit, in order, then the
 * execution count. An error line when the kernel dies under it (the kernel
 * is then not running). 0, or -1 with err (nothing was run). */
int kernel_execute(struct kernel *k, const char *code, kernel_emit_fn emit, kernel_gone_fn gone,
                   void *ud, char *err, size_t errlen);

/* code run with nothing shown and no count (silent): what a call's env
 * vars set and put back. 0, or -1 with err. */
int kernel_run_silent(struct kernel *k, const char *code, char *err, size_t errlen);

/* SIGINT to the kernel: what a client that went away, or a timeout, asks. */
void kernel_interrupt(const struct kernel *k);

/* Stops the kernel (SIGTERM, then SIGKILL after a second) and closes its
 * sockets. */
void kernel_stop(struct kernel *k);

#endif
