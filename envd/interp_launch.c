/* interp_launch.c: the code interpreter's server (decision 0088), started and
 * kept running by envd in a sandbox whose template carries it.
 *
 * envd, not the template's start command, starts it because only envd has
 * what the server needs: the sandbox's final environment (a warm sandbox's
 * env vars arrive with /init), and the access token, of which the server is
 * given only the SHA-256 digest, through a pipe, never its environment. The
 * listening socket is envd's too, made before envd's /health answers: a
 * runCode sent the moment the sandbox is running queues in its backlog
 * instead of being refused, and a restarted server takes the same socket. */
#include "interp_launch.h"

#include "envd.h"
#include "http_serve.h"
#include "users.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BACKOFF_MAX_S 30
#define STEADY_S 60 /* a server that ran this long restarts at once */
#define ENV_MAX 1024

extern char **environ;

static int listen_fd = -1;
/* A warm sandbox's server is started before the claim, its python kernel
 * with it; its pipe is held here until /init says the token and env vars. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int claimed = -1; /* -1 not yet known (set by interp_launch_start) */
static int pending_w = -1;

int interp_launch_prepare(void)
{
    char err[160];

    if (envd_cfg.agent || access(INTERP_EXE, X_OK) != 0)
        return 0;
    listen_fd = http_listen(envd_cfg.listen_addr, INTERP_PORT, err, sizeof(err));
    if (listen_fd < 0) {
        envd_log("code interpreter: %s; not started", err);
        return -1;
    }
    return 0;
}

/* The server runs as the sandbox's user, never as root. */
static int server_user(struct envd_user *u)
{
    if (users_default(u) == 0 && u->uid != 0)
        return 0;
    return users_lookup("user", u) == 0 && u->uid != 0 ? 0 : -1;
}

/* The digest's hex, or "-" for a sandbox without a token; a newline. */
static void token_line(char *out, size_t len)
{
    unsigned char d[32];
    unsigned int n = 0;

    snprintf(out, len, "-\n");
    if (!envd_cfg.access_token ||
        EVP_Digest(envd_cfg.access_token, envd_cfg.access_token_len, d, &n, EVP_sha256(), NULL) !=
            1 ||
        n != sizeof(d) || len < 2 * sizeof(d) + 2)
        return;
    for (size_t i = 0; i < sizeof(d); i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
    snprintf(out + 2 * sizeof(d), 2, "\n");
}

/* envd's environment with the user's HOME, USER and LOGNAME: built before
 * the fork, since the child may only make async-signal-safe calls. */
static char **user_env(const struct envd_user *u, char *home, char *user, char *logname)
{
    static char *envp[ENV_MAX + 4];
    size_t n = 0;

    snprintf(home, PATH_MAX + 8, "HOME=%s", u->home);
    snprintf(user, 80, "USER=%s", u->name);
    snprintf(logname, 80, "LOGNAME=%s", u->name);
    for (char **e = environ; *e && n < ENV_MAX; e++)
        if (strncmp(*e, "HOME=", 5) != 0 && strncmp(*e, "USER=", 5) != 0 &&
            strncmp(*e, "LOGNAME=", 8) != 0)
            envp[n++] = *e;
    envp[n++] = home;
    envp[n++] = user;
    envp[n++] = logname;
    envp[n] = NULL;
    return envp;
}

static void child(const struct envd_user *u, int token_r, char **envp)
{
    sigset_t none;
    char *argv[] = {"corral-interp", "-listen-fd",    "3", "-token-fd", "4",
                    "-cwd",          (char *)u->home, NULL};
    /* Above 4 first: either may sit on 3 or 4 (and on 3, dup2 to itself
     * would keep its close-on-exec). */
    int null = open("/dev/null", O_RDONLY), l = fcntl(listen_fd, F_DUPFD, 10),
        t = fcntl(token_r, F_DUPFD, 10);

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    setsid();
    if (null < 0 || l < 0 || t < 0 || dup2(null, 0) < 0 || dup2(l, 3) < 0 || dup2(t, 4) < 0 ||
        syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) < 0 ||
        syscall(SYS_setresgid, u->gid, u->gid, u->gid) < 0 ||
        syscall(SYS_setresuid, u->uid, u->uid, u->uid) < 0 || chdir(u->home) < 0)
        _exit(127);
    execve(INTERP_EXE, argv, envp);
    _exit(127);
}

/* With mu held: the token's digest line, then the claim's env vars (a JSON
 * object, one line), to the server waiting for them; the pipe closed. */
static void hand_over(const char *env_json)
{
    char line[80];

    if (pending_w < 0)
        return;
    token_line(line, sizeof(line));
    if (write(pending_w, line, strlen(line)) < 0 ||
        write(pending_w, env_json, strlen(env_json)) < 0 || write(pending_w, "\n", 1) < 0)
        envd_log("code interpreter: cannot hand it the token digest: %s", strerror(errno));
    memset(line, 0, sizeof(line));
    close(pending_w);
    pending_w = -1;
}

/* Starts the server; its pid, or -1. */
static pid_t spawn(void)
{
    static char home[PATH_MAX + 8], user[80], logname[80];
    struct envd_user u;
    int p[2];
    pid_t pid;

    if (server_user(&u) != 0) {
        envd_log("code interpreter: no user but root to run it as; not started");
        return -1;
    }
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    char **envp = user_env(&u, home, user, logname);
    pid = fork();
    if (pid == 0)
        child(&u, p[0], envp);
    close(p[0]);
    pthread_mutex_lock(&mu);
    if (pending_w >= 0) /* an earlier server's, which ended unclaimed */
        close(pending_w);
    pending_w = pid > 0 ? p[1] : -1;
    if (pid <= 0)
        close(p[1]);
    else if (claimed)
        hand_over("{}"); /* the env vars are in envd's environment already */
    pthread_mutex_unlock(&mu);
    return pid;
}

/* envd's reaper thread reaps every child, so the end is seen through a
 * pidfd (readable once the process has ended, reaped or not). */
static void wait_end(pid_t pid)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    struct pollfd pfd = {.fd = fd, .events = POLLIN};

    if (fd < 0)
        return; /* ended and reaped already */
    while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
        ;
    close(fd);
}

static void *supervise(void *arg)
{
    unsigned backoff = 1;

    (void)arg;
    for (;;) {
        long long t0 = envd_now_ms();
        pid_t pid = spawn();

        if (pid > 0) {
            envd_log("code interpreter started (pid %d)", (int)pid);
            wait_end(pid);
        }
        if (envd_now_ms() - t0 > STEADY_S * 1000LL)
            backoff = 1;
        envd_log("code interpreter ended; started again in %us", backoff);
        sleep(backoff);
        backoff = backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : backoff * 2;
    }
    return NULL;
}

void interp_launch_claimed(const char *env_json)
{
    pthread_mutex_lock(&mu);
    claimed = 1;
    hand_over(env_json);
    pthread_mutex_unlock(&mu);
}

void interp_launch_start(int warm)
{
    pthread_t t;

    pthread_mutex_lock(&mu);
    claimed = !warm;
    pthread_mutex_unlock(&mu);
    if (listen_fd < 0)
        return;
    if (pthread_create(&t, NULL, supervise, NULL) != 0) {
        envd_log("code interpreter: cannot start its thread");
        return;
    }
    pthread_detach(t);
}
