#include "start_ready.h"

#include "docker_exec.h"

#include "clock.h"

#include <stdio.h>
#include <string.h>

static json_t *sh_c(const char *cmd)
{
    return json_pack("[s,s,s]", "/bin/sh", "-c", cmd);
}

/* Without a ready command: the start command must still run, or have ended
 * well, a second after it began. */
static int alive_after(struct docker *d, const char *id, char *reason, size_t len)
{
    char err[256];
    int running = 0, code = 0;

    clock_sleep_ms(START_ALIVE_MS);
    if (docker_exec_status(d, id, &running, &code, err, sizeof(err)) != 0)
        return -1;
    if (running || code == 0)
        return 0;
    snprintf(reason, len, "start command exited with code %d", code);
    return 1;
}

/* Why: the newest output is what counts, so when the reason cannot hold
 * all of tail, its start goes. */
static void timed_out(long timeout_s, const char *tail, char *reason, size_t len)
{
    int n = snprintf(reason, len, "ready command did not succeed in %lds: ", timeout_s);
    size_t room = n > 0 && (size_t)n < len ? len - (size_t)n - 1 : 0, tl = strlen(tail);

    snprintf(reason + (len - room - 1), room + 1, "%s", tail + (tl > room ? tl - room : 0));
}

/* The ready command every START_READY_EVERY_MS until it exits 0 or
 * timeout_s runs out. */
static int until_ready(struct docker *d, const char *ctr, struct exec_spec *s, long timeout_s,
                       char *reason, size_t len)
{
    int64_t deadline = clock_now_ms() + timeout_s * 1000;
    char tail[EXEC_TAIL_MAX + 1], last[EXEC_TAIL_MAX + 1] = "", err[256];

    for (;;) {
        int64_t left = deadline - clock_now_ms(), t0 = clock_now_ms();
        int code = -1, rc = docker_exec_run(d, ctr, s, left > 0 ? left : 1, NULL, NULL, &code, tail,
                                            err, sizeof(err));
        if (rc < 0)
            return -1;
        if (rc == 1) {
            snprintf(reason, len, "ready command: %s", err);
            return 1;
        }
        if (rc == 0 && code == 0)
            return 0;
        if (rc == 0) /* an attempt cut short by the deadline says nothing */
            memcpy(last, tail, sizeof(last));
        if (clock_now_ms() >= deadline) {
            timed_out(timeout_s, last, reason, len);
            return 1;
        }
        int64_t spent = clock_now_ms() - t0;
        if (spent < START_READY_EVERY_MS)
            clock_sleep_ms(START_READY_EVERY_MS - spent);
    }
}

int start_ready_run(struct docker *d, const char *ctr, json_t *start, int fresh, char *reason,
                    size_t len)
{
    const char *cmd = json_string_value(json_object_get(start, "cmd"));
    const char *ready = json_string_value(json_object_get(start, "ready"));
    json_int_t t = json_integer_value(json_object_get(start, "timeout_s"));
    struct exec_spec s = {.user = json_string_value(json_object_get(start, "user")),
                          .workdir = json_string_value(json_object_get(start, "workdir"))};
    char id[65], err[256];
    int rc = 0;

    if (fresh && cmd && *cmd) {
        s.cmd = sh_c(cmd);
        rc = docker_exec_detached(d, ctr, &s, id, err, sizeof(err));
        json_decref(s.cmd);
        if (rc != 0) {
            snprintf(reason, len, "start command: %s", err);
            return rc;
        }
        if (!ready || !*ready)
            return alive_after(d, id, reason, len);
    }
    if (!ready || !*ready)
        return 0;
    s.cmd = sh_c(ready);
    rc = until_ready(d, ctr, &s, t > 0 ? (long)t : START_TIMEOUT_S_DEFAULT, reason, len);
    json_decref(s.cmd);
    return rc;
}
