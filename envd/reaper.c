/*
 * One thread owns the signals. It reaps every child, ours and orphans that the
 * kernel re-parents to PID 1 (or to envd as a subreaper outside a container),
 * and hands our processes' exit statuses to their pumps. On SIGTERM/SIGINT it
 * kills the process groups envd started and exits, so `docker stop` is quick.
 */
#include "reaper.h"
#include "envd.h"
#include "process.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static sigset_t reaper_set;

/* A handler, not SIG_DFL: as PID 1 a signal with the default action is dropped. */
static void ignore_signal(int sig)
{
    (void)sig;
}

void reaper_block_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = ignore_signal;
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&reaper_set);
    sigaddset(&reaper_set, SIGCHLD);
    sigaddset(&reaper_set, SIGTERM);
    sigaddset(&reaper_set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &reaper_set, NULL);
}

static void reap_all(void)
{
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        proc_on_exit(pid, status);
}

static void *reaper_main(void *arg)
{
    (void)arg;
    for (;;) {
        siginfo_t info;
        int sig = sigwaitinfo(&reaper_set, &info);
        if (sig < 0) {
            if (errno != EINTR)
                envd_log("sigwaitinfo: %s", strerror(errno));
            continue;
        }
        if (sig == SIGCHLD) {
            reap_all();
            continue;
        }
        envd_log("signal %d: stopping", sig);
        proc_kill_all();
        _exit(0);
    }
    return NULL;
}

int reaper_start(void)
{
    pthread_t t;
    pthread_attr_t attr;
    int rc;

    /* Outside a container envd is not PID 1: become the reaper of our orphans anyway. */
    if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
        envd_log("cannot become a subreaper: %s", strerror(errno));
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    rc = pthread_create(&t, &attr, reaper_main, NULL);
    pthread_attr_destroy(&attr);
    /* Children that exited before the thread existed are reaped on its first signal. */
    return rc;
}
