/* ctl_registry_gc.c: corralctl registry-gc. The manifests go through the
 * registry's API (registry_gc.c); the blobs no manifest names any more only
 * the registry's own garbage-collect frees, on the registry's host, while
 * Corral holds pushes (store/registry_gate.h) so that it never deletes what
 * a push has uploaded and not yet named. */
#include "ctl_registry_gc.h"

#include "clock.h"
#include "registry_gate.h"
#include "registry_gc.h"

#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOLD_EXTRA_S 600 /* the hold outlives the wait by the collection's own time */

extern char **environ;

/* docker-registry garbage-collect CONFIG, its chatter on stderr: its status. */
static int collect(const char *config)
{
    char *argv[] = {"docker-registry", "garbage-collect", (char *)config, NULL};
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int st = -1, rc;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    rc = posix_spawnp(&pid, "docker-registry", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Pushes held and none in flight: 0; -1 Redis; n > 0 still in flight. */
static int hold(struct rconn *rc, long wait_s)
{
    long long until = clock_now_ms() + wait_s * 1000;
    int n;

    for (;;) {
        n = registry_gc_hold(rc, wait_s + HOLD_EXTRA_S, clock_now_ms() / 1000);
        if (n <= 0 || clock_now_ms() >= until)
            return n;
        clock_sleep_ms(2000); // sleep: a push in flight ends within its token's 300 s
    }
}

/* What became of the blobs, as the report's "blobs". */
static const char *blobs(struct rconn *rc, const struct corral_conf *conf, long wait_s, int *bad)
{
    int n, st;

    if (!conf->registry_config[0] || access(conf->registry_config, R_OK) != 0)
        return "not collected: registry_config is not readable here (run on the registry's host)";
    n = hold(rc, wait_s);
    if (n != 0) {
        *bad = 1;
        registry_gc_release(rc);
        return n < 0 ? "not collected: the state store is unreachable"
                     : "not collected: pushes still in flight after the wait";
    }
    st = collect(conf->registry_config);
    registry_gc_release(rc);
    *bad |= st != 0;
    return st == 0 ? "collected" : "not collected: docker-registry garbage-collect failed";
}

int ctl_registry_gc(struct rconn *rc, const struct corral_conf *conf, long wait_s)
{
    struct registry_gc_report r;
    char err[400] = "";
    int bad = registry_gc_manifests(rc, conf, &r, err, sizeof(err)) != 0;
    const char *b =
        bad ? "not collected: the manifests' pass failed" : blobs(rc, conf, wait_s, &bad);
    json_t *out =
        json_pack("{s:i, s:i, s:i, s:i, s:s, s:s?}", "repositories", r.repos, "kept", r.kept,
                  "deleted", r.deleted, "failed", r.failed, "blobs", b, "error", *err ? err : NULL);

    if (!out || json_dumpf(out, stdout, JSON_COMPACT) != 0)
        bad = 1;
    putchar('\n');
    json_decref(out);
    return bad || r.failed ? 1 : 0;
}
