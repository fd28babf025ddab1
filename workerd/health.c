/* health.c: whether this worker can serve a new sandbox, said in every
 * heartbeat. A worker out of file descriptors still heartbeats over its open
 * connection while every data-plane request and every create fails, so the
 * control plane must hear it from us: it places nothing on a worker that names
 * a problem. */
#include "worker.h"

#include "clock.h"
#include "dataport.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/resource.h>

/* How recent an accept failure still counts, and the fds kept in reserve for a
 * create (a network, a container, dockerd and envd connections). */
#define ACCEPT_TROUBLE_MS 30000
#define FD_RESERVE_MIN 64

static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    long n = 0;

    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 2; /* . and .. */
}

static int fds_low(char *out, size_t len)
{
    struct rlimit rl;
    long used = open_fds(), reserve;

    if (used < 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    reserve = (long)rl.rlim_cur / 10;
    if (reserve < FD_RESERVE_MIN)
        reserve = FD_RESERVE_MIN;
    if (used + reserve < (long)rl.rlim_cur)
        return 0;
    snprintf(out, len, "file descriptors nearly exhausted (%ld open, limit %lu)", used,
             (unsigned long)rl.rlim_cur);
    return 1;
}

void health_problem(const struct worker *w, char *out, size_t len)
{
    char why[128];
    int64_t when = dataport_accept_trouble(why, sizeof(why));

    out[0] = '\0';
    if (w->docker_down)
        snprintf(out, len, "dockerd unreachable");
    else if (when && clock_now_ms() - when < ACCEPT_TROUBLE_MS)
        snprintf(out, len, "data port cannot accept connections: %s", why);
    else
        fds_low(out, len);
}
