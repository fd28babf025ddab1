/* agent_spawn.c: one session's envd started on this machine, and its whole
 * process tree ended.
 *
 * The access token reaches envd as it does in a container: in
 * CORRAL_ENVD_ACCESS_TOKEN, which envd removes and wipes before it runs
 * anything; never in argv, so never in ps. envd runs in a session of its own
 * (so its process group is its pid, for the kill) and asks on workerd's
 * terminal by that terminal's path (-gate-tty): a process of workerd's
 * session outside its foreground group that read the terminal would be
 * stopped by SIGTTIN, or read EIO, and every question would be a denial. */
#include "agent.h"

#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define MAX_ARGS 40

struct argv_buf {
    const char *v[MAX_ARGS + 1];
    int n;
};

static void arg(struct argv_buf *a, const char *s)
{
    if (a->n < MAX_ARGS)
        a->v[a->n++] = s;
}

static void arg2(struct argv_buf *a, const char *flag, const char *value)
{
    if (value && value[0]) {
        arg(a, flag);
        arg(a, value);
    }
}

/* The terminal workerd runs on (its stdin, else stderr), or NULL: without
 * one, nobody can answer and every question ends in its timeout. */
static const char *workerd_tty(void)
{
    static char path[256];
    const char *t = ttyname(STDIN_FILENO);

    if (!t)
        t = ttyname(STDERR_FILENO);
    if (!t)
        return NULL;
    snprintf(path, sizeof(path), "%s", t);
    return path;
}

/* The gate's flags (the contract of issue 13) go only when a gate is asked
 * for: without one, envd runs as on a throwaway sandbox. */
static void gate_args(const struct worker_conf *c, struct argv_buf *a, const char *sbid,
                      char *timeout, size_t tlen)
{
    const struct agent_conf *g = &c->agent;

    if (!g->permission_mode[0] && !g->os_sandbox[0])
        return;
    arg2(a, "-permission-mode", g->permission_mode);
    arg2(a, "-work-tree", g->work_tree);
    arg2(a, "-gate-dir", g->gate_dir);
    arg2(a, "-policy", g->policy);
    arg2(a, "-os-sandbox", g->os_sandbox);
    if (strcmp(g->permission_mode, "prompt") == 0)
        arg2(a, "-gate-tty", workerd_tty());
    if (g->ask_timeout_s > 0) {
        snprintf(timeout, tlen, "%ld", g->ask_timeout_s);
        arg2(a, "-ask-timeout", timeout);
    }
    arg2(a, "-hardlock", g->conf_file);
    arg2(a, "-hardlock", c->token_file);
    arg2(a, "-sandbox-id", sbid);
}

/* workerd's environment, the sandbox's env vars, then the token: built
 * before fork, as the child may only call async-signal-safe functions. */
static char **build_env(json_t *sb)
{
    const char *token = json_string_value(json_object_get(sb, "envd_access_token")), *k;
    size_t n = 0, i = 0;
    json_t *v;
    char **env;

    while (environ[n])
        n++;
    env = calloc(n + json_object_size(json_object_get(sb, "env")) + 2, sizeof(*env));
    if (!env)
        return NULL;
    for (size_t e = 0; e < n; e++)
        if (strncmp(environ[e], ENVD_TOKEN_ENV "=", sizeof(ENVD_TOKEN_ENV)) != 0)
            env[i++] = strdup(environ[e]);
    json_object_foreach(json_object_get(sb, "env"), k, v)
    {
        if (json_is_string(v) && *k && !strchr(k, '=') && strcmp(k, ENVD_TOKEN_ENV) != 0 &&
            asprintf(&env[i], "%s=%s", k, json_string_value(v)) >= 0)
            i++;
    }
    if (token && *token && asprintf(&env[i], "%s=%s", ENVD_TOKEN_ENV, token) >= 0)
        i++;
    return env;
}

static void free_env(char **env)
{
    for (size_t i = 0; env && env[i]; i++) {
        explicit_bzero(env[i], strlen(env[i]));
        free(env[i]);
    }
    free(env);
}

pid_t agent_spawn(const struct worker_conf *c, json_t *sb, const char *sbid, const char *ip,
                  char *err, size_t errlen)
{
    struct argv_buf a = {.n = 0};
    char timeout[24];
    char **env = build_env(sb);
    pid_t pid;

    if (!env) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    arg(&a, c->envd_bin);
    arg(&a, "-agent");
    arg2(&a, "-addr", ip);
    arg2(&a, "-port", ENVD_PORT_STR);
    if (c->envd_require_signature_expiration)
        arg2(&a, "-signature-expiration", "required");
    gate_args(c, &a, sbid, timeout, sizeof(timeout));
    a.v[a.n] = NULL;
    pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setsid();
        /* Nothing of workerd's (its control-plane connections, its files)
         * reaches a session, whether or not its opener set close-on-exec. */
        close_range(3, ~0U, 0);
        execve(c->envd_bin, (char *const *)a.v, env);
        _exit(127);
    }
    if (pid < 0)
        snprintf(err, errlen, "fork: %s", strerror(errno));
    free_env(env);
    return pid;
}

/* Field 4 of /proc/<pid>/stat, after the command name's closing ')'. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512], *close_p;
    FILE *f;
    size_t n;
    int ppid = -1;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "re");
    if (!f)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    close_p = strrchr(buf, ')');
    if (!close_p || sscanf(close_p + 1, " %*c %d", &ppid) != 1)
        return -1;
    return (pid_t)ppid;
}

/* 1 when pid descends from root (by parents, through /proc). */
static int descends(pid_t pid, pid_t root)
{
    for (int depth = 0; pid > 1 && depth < 64; depth++) {
        pid = parent_of(pid);
        if (pid == root)
            return 1;
    }
    return 0;
}

/* One pass: SIGKILL every descendant of root. How many were found. */
static int kill_descendants(pid_t root)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid > 1 && pid != root && descends(pid, root)) {
            kill(pid, SIGKILL);
            n++;
        }
    }
    closedir(d);
    return n;
}

void agent_kill_tree(pid_t pid)
{
    if (pid <= 1)
        return;
    /* Stopped, envd starts nothing new; its children start their own
     * sessions, so its process group alone would miss them. A few passes
     * catch what forked while the first one ran. */
    kill(pid, SIGSTOP);
    for (int pass = 0; pass < 5 && kill_descendants(pid) > 0; pass++)
        ;
    killpg(pid, SIGKILL);
    kill(pid, SIGKILL);
}

int agent_pid_is_envd(pid_t pid)
{
    char path[64], buf[4096];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    f = fopen(path, "re");
    if (!f)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* argv[0] is envd's path; "-agent" is argv[1], right after its NUL. */
    return n > 0 && strstr(buf, "envd") && strlen(buf) + 1 < n &&
           strcmp(buf + strlen(buf) + 1, "-agent") == 0;
}
