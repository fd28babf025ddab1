#include "probe.h"

#include "docker_logs.h"
#include "log.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#define PROBE_SCRIPT "cat /proc/version; dmesg 2>/dev/null | head -n 5"

int probe_output_is_gvisor(const char *output, const char *host_release)
{
    if (!output || !strstr(output, "Linux version"))
        return 0;
    if (host_release[0] && strstr(output, host_release))
        return 0; /* the host's kernel answered: not a guest */
    return strstr(output, "gVisor") != NULL;
}

static int post(struct docker *d, const char *path, json_t *body, long timeout_ms, long want,
                char *err, size_t errlen)
{
    json_t *ans = NULL;
    long status = 0;

    if (docker_call(d, "POST", path, body, timeout_ms, &status, &ans, err, errlen) != 0)
        return -1;
    if (status != want && !(want == 204 && status == 304)) {
        snprintf(err, errlen, "POST %s: %s", path, docker_errmsg(ans, status));
        json_decref(ans);
        return -1;
    }
    json_decref(ans);
    return 0;
}

/* Runs the probe script in a throwaway container; output in out. */
static int run_probe(struct docker *d, const struct worker_conf *c, const char *runtime,
                     const char *name, char *out, size_t outlen, char *err, size_t errlen)
{
    json_t *body = json_pack("{s:s, s:[s,s,s], s:{s:s}, s:{s:s, s:s}}", "Image", c->probe_image,
                             "Cmd", "sh", "-c", PROBE_SCRIPT, "Labels", "corral.probe", runtime,
                             "HostConfig", "Runtime", runtime, "NetworkMode", "none");
    char path[512], *raw = NULL;
    size_t rawlen = 0;
    long status = 0;
    int rc;

    snprintf(path, sizeof(path), "/containers/create?name=%s", name);
    rc = post(d, path, body, 60000, 201, err, errlen);
    json_decref(body);
    if (rc != 0)
        return -1;
    snprintf(path, sizeof(path), "/containers/%s/start", name);
    if (post(d, path, NULL, c->probe_timeout_ms, 204, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof(path), "/containers/%s/wait", name);
    if (post(d, path, NULL, c->probe_timeout_ms, 200, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof(path), "/containers/%s/logs?stdout=1&stderr=1", name);
    if (docker_call_raw(d, "GET", path, 30000, &status, &raw, &rawlen, err, errlen) != 0)
        return -1;
    docker_demux(raw, rawlen, out, outlen);
    free(raw);
    return 0;
}

static void remove_probe(struct docker *d, const char *name)
{
    char path[512], err[256];
    json_t *ans = NULL;
    long status;

    snprintf(path, sizeof(path), "/containers/%s?force=1", name);
    if (docker_call(d, "DELETE", path, NULL, 60000, &status, &ans, err, sizeof(err)) != 0)
        log_warn("probe cleanup: %s", err);
    json_decref(ans);
}

static enum tier verify_gvisor(struct docker *d, const struct worker_conf *c, const char *rt)
{
    char name[64], hex[17], out[4096], err[512];
    struct utsname u;
    int ok;

    if (secret_random_hex(hex, 8) != 0 || uname(&u) != 0)
        return TIER_UNKNOWN;
    snprintf(name, sizeof(name), "corral-probe-%s", hex);
    ok = run_probe(d, c, rt, name, out, sizeof(out), err, sizeof(err)) == 0;
    remove_probe(d, name);
    if (!ok) {
        log_warn("runtime %s: probe failed (%s); tier UNKNOWN", rt, err);
        return TIER_UNKNOWN;
    }
    if (!probe_output_is_gvisor(out, u.release)) {
        log_warn("runtime %s: probe shows no gVisor guest; tier UNKNOWN", rt);
        return TIER_UNKNOWN;
    }
    return TIER_GVISOR;
}

/* What the control plane accepts as a runtime name: [a-z0-9._-]{1,24}. */
static int reportable(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > 24)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
              name[i] == '.' || name[i] == '_' || name[i] == '-'))
            return 0;
    return 1;
}

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path ? path : "";
}

static enum tier runtime_tier(struct docker *d, const struct worker_conf *c, const char *name,
                              json_t *rt)
{
    const char *bin = base_name(json_string_value(json_object_get(rt, "path")));

    if (strcmp(name, "runc") == 0 || strcmp(bin, "runc") == 0)
        return TIER_CONTAINER;
    if (strcmp(name, "runsc") == 0 || strcmp(bin, "runsc") == 0)
        return verify_gvisor(d, c, name);
    return TIER_UNKNOWN;
}

int probe_runtimes(struct docker *d, const struct worker_conf *c, struct runtime *out, int *n,
                   char *err, size_t errlen)
{
    json_t *info = NULL, *rt;
    const char *name;
    long status = 0;

    *n = 0;
    if (docker_call(d, "GET", "/info", NULL, 30000, &status, &info, err, errlen) != 0)
        return -1;
    if (status != 200) {
        snprintf(err, errlen, "GET /info: %s", docker_errmsg(info, status));
        json_decref(info);
        return -1;
    }
    json_object_foreach(json_object_get(info, "Runtimes"), name, rt)
    {
        /* dockerd lists its containerd shims (io.containerd.runc.v2, ...) as
         * runtimes too; they are runc under other names, and no command names them. */
        if (*n == PROBE_MAX_RUNTIMES || strlen(name) >= sizeof(out->name) ||
            strncmp(name, "io.containerd.", 14) == 0)
            continue;
        if (!reportable(name)) {
            log_warn("runtime %s: name not reportable ([a-z0-9._-]{1,24}); left out", name);
            continue;
        }
        snprintf(out[*n].name, sizeof(out[*n].name), "%s", name);
        out[*n].tier = runtime_tier(d, c, name, rt);
        log_info("runtime %s: tier %s", name, tier_name(out[*n].tier));
        (*n)++;
    }
    json_decref(info);
    return 0;
}
