/* corral-interp: the code interpreter's server in a sandbox (decision 0088;
 * README.md). Serves @e2b/code-interpreter on port 49999, each context a
 * Jupyter kernel it starts and speaks to itself; the python default
 * context's kernel is started at once, so that a first runCode does not
 * wait for it. Runs as the sandbox's user.
 *
 *   corral-interp [-addr 0.0.0.0] [-port 49999] [-cwd /home/user] [-dir DIR]
 *                 [-kernels /usr/lib/corral-interp/kernels]
 *                 [-listen-fd N] [-token-fd N]
 *
 * In a sandbox envd starts it (envd/interp_launch.c) with -listen-fd, the
 * socket envd made for port 49999, and -token-fd, a pipe carrying the
 * access token's digest that POST /execute checks (token.h).
 */
#include "contexts.h"
#include "env_code.h"
#include "http_serve.h"
#include "routes.h"
#include "token.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("corral-interp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* SIGTERM or SIGINT, taken by this thread (blocked in every other): the
 * kernels, each in a session of its own, are stopped with the server. */
static void *signal_main(void *arg)
{
    sigset_t *set = arg;
    int sig;

    sigwait(set, &sig);
    contexts_stop_all();
    _exit(0);
}

static int watch_signals(void)
{
    static sigset_t set;
    pthread_t t;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
        pthread_create(&t, NULL, signal_main, &set) != 0)
        return -1;
    pthread_detach(t);
    return 0;
}

/* The claim's env vars: this process's (every kernel started later inherits
 * them) and those of the python kernel started before them. */
static void claim_env(const char *json, struct context *c)
{
    json_t *vars = json ? json_loads(json, 0, NULL) : NULL;
    const char *k;
    json_t *v;
    char err[256], *code;

    json_object_foreach(vars, k, v)
    {
        if (json_is_string(v))
            setenv(k, json_string_value(v), 1);
    }
    if (c && json_object_size(vars) > 0 && (code = env_code_apply(vars))) {
        if (kernel_run_silent(&c->k, code, err, sizeof(err)) != 0)
            say("the claim's env vars in the python kernel: %s", err);
        free(code);
    }
    json_decref(vars);
}

/* envd's token line and env vars (token.h); -1: not serving. */
static int take_claim(int fd, struct context *c)
{
    char *rest = NULL;

    if (token_load(fd, &rest) != 0) {
        say("-token-fd %d: no token line from envd; not serving", fd);
        return -1;
    }
    claim_env(rest, c);
    if (rest)
        explicit_bzero(rest, strlen(rest));
    free(rest);
    return 0;
}

int main(int argc, char **argv)
{
    const char *addr = "0.0.0.0", *cwd = getenv("HOME") ? getenv("HOME") : "/", *dir = NULL;
    char err[256], tmp[64];
    int port = 49999, lfd = -1, token_fd = -1, status;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-addr") == 0)
            addr = argv[i + 1];
        else if (strcmp(argv[i], "-port") == 0)
            port = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-cwd") == 0)
            cwd = argv[i + 1];
        else if (strcmp(argv[i], "-dir") == 0)
            dir = argv[i + 1];
        else if (strcmp(argv[i], "-kernels") == 0)
            kernel_set_dir(argv[i + 1]);
        else if (strcmp(argv[i], "-listen-fd") == 0)
            lfd = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-token-fd") == 0)
            token_fd = atoi(argv[i + 1]);
    }
    if (argc % 2 == 0 || port <= 0 || port > 65535) {
        say("usage: corral-interp [-addr A] [-port P] [-cwd DIR] [-dir DIR] [-kernels DIR] "
            "[-listen-fd N] [-token-fd N]");
        return 2;
    }
    if (!dir) {
        snprintf(tmp, sizeof(tmp), "/tmp/corral-interp-%d", (int)getuid());
        mkdir(tmp, 0700);
        dir = tmp;
    }
    signal(SIGPIPE, SIG_IGN);
    kernel_env_init();
    if (watch_signals() != 0) {
        say("cannot watch for SIGTERM");
        return 1;
    }
    contexts_init(dir, cwd, 30000);
    if (lfd < 0)
        lfd = http_listen(addr, port, err, sizeof(err));
    if (lfd < 0) {
        say("%s", err);
        return 1;
    }
    struct context *c = contexts_acquire(NULL, "python", &status, err, sizeof(err));
    if (!c)
        say("the python kernel did not start: %s (tried again at the first call)", err);
    /* After the kernel's start: a warm sandbox's envd hands the token over
     * only at its claim, and the kernel is ready by then. */
    if (token_fd >= 0 && take_claim(token_fd, c) != 0)
        return 1;
    if (c)
        contexts_release(c);
    say("serving on %s:%d", addr, port); /* the address of -listen-fd's socket, by default */
    http_serve_forever(lfd, routes_serve, 120 * 1000, 300, say);
    return 1;
}
