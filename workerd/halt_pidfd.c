#include "halt_pidfd.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

int halt_is_ns_init(const char *line)
{
    const char *p;
    char *end;
    int fields = 0;
    long last = -1;

    if (!line || strncmp(line, "NSpid:", 6) != 0)
        return 0;
    for (p = line + 6;; p = end) {
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        last = v;
        fields++;
    }
    /* our own namespace's pid, then one per namespace below: the last is 1
     * for an init, and an init of ours (one field) is not a container's. */
    return fields >= 2 && last == 1;
}

/* 1 when the file's line that starts with key passes ok(). */
static int line_ok(const char *path, const char *key, int (*ok)(const char *))
{
    FILE *f = fopen(path, "re");
    char line[512];
    int found = 0;

    if (!f)
        return 0;
    while (!found && fgets(line, sizeof(line), f))
        if (strncmp(line, key, strlen(key)) == 0)
            found = ok(line);
    fclose(f);
    return found;
}

/* 1 when one of pid's cgroups names the container: /docker/<id> under the
 * cgroupfs driver, docker-<id>.scope under systemd's. */
static int in_cgroup_of(long pid, const char *full_id)
{
    char path[64], line[1024];
    FILE *f;
    int found = 0;

    snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
    if (!(f = fopen(path, "re")))
        return 0;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, full_id) != NULL;
    fclose(f);
    return found;
}

int halt_pidfd(long pid, const char *full_id, int timeout_ms)
{
    char path[64];
    struct pollfd p;
    int fd, rc;

    if (pid <= 1 || !full_id || strlen(full_id) != 64)
        return -1;
    fd = (int)pidfd_open((pid_t)pid, 0);
    if (fd < 0)
        return -1;
    /* fdinfo is the pidfd's own process; the cgroup is read by pid, which
     * is that process unless it died meanwhile (then the kill is moot). */
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    if (!line_ok(path, "NSpid:", halt_is_ns_init) || !in_cgroup_of(pid, full_id) ||
        (pidfd_send_signal(fd, SIGKILL, NULL, 0) != 0 && errno != ESRCH)) {
        close(fd);
        return -1;
    }
    p = (struct pollfd){.fd = fd, .events = POLLIN};
    do
        rc = poll(&p, 1, timeout_ms);
    while (rc < 0 && errno == EINTR);
    close(fd);
    return rc == 1 ? 0 : -1;
}
