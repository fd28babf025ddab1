#include "sandbox_body.h"

#include "volumes.h"

#include "containers.h"
#include "warm_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const proxy_env[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
                                        NULL};

static void env_add(json_t *arr, const char *k, const char *v)
{
    char *kv;

    if (!v) { /* unset: envd's -net-env form */
        json_array_append_new(arr, json_string(k));
        return;
    }
    if (asprintf(&kv, "%s=%s", k, v) < 0)
        return;
    json_array_append_new(arr, json_string(kv));
    free(kv);
}

/* Where the sandbox's programs find the proxy's CA (decision 0091): Node
 * adds NODE_EXTRA_CA_CERTS to its roots; OpenSSL's and Python requests' go
 * to the system bundle, which envd makes hold the CA at start. */
static const char *const ca_env[][2] = {
    {"NODE_EXTRA_CA_CERTS", SANDBOX_EGRESS_CA},
    {"SSL_CERT_FILE", SANDBOX_CA_BUNDLE},
    {"REQUESTS_CA_BUNDLE", SANDBOX_CA_BUNDLE},
    {NULL, NULL},
};

void sandbox_proxy_env(json_t *arr, int on)
{
    for (int i = 0; proxy_env[i]; i++)
        env_add(arr, proxy_env[i], on ? "http://" EGRESS_ALIAS ":" EGRESS_PORT_STR : NULL);
    env_add(arr, "NO_PROXY", on ? "localhost,127.0.0.1,::1" : NULL);
    env_add(arr, "no_proxy", on ? "localhost,127.0.0.1,::1" : NULL);
    for (int i = 0; ca_env[i][0]; i++)
        env_add(arr, ca_env[i][0], on ? ca_env[i][1] : NULL);
}

void sandbox_env_blanked(json_t *arr)
{
    env_add(arr, ENVD_TOKEN_ENV, "");
    env_add(arr, WARM_SECRET_ENV, ""); /* a claimed warm sandbox's (decision 0082) */
    for (int i = 0; proxy_env[i]; i++)
        env_add(arr, proxy_env[i], "");
    env_add(arr, "NO_PROXY", "");
    env_add(arr, "no_proxy", "");
    for (int i = 0; ca_env[i][0]; i++)
        env_add(arr, ca_env[i][0], "");
}

/* The sandbox's env vars (envd hands them to every process it starts), the
 * proxy variables when egress goes through the proxy, then, for a secure
 * sandbox, envd's access token, which envd takes out of its environment
 * before it runs anything. The token travels only in this request body to
 * dockerd: never in argv, never in a log. */
static json_t *env_array(json_t *sb, int via_proxy)
{
    json_t *arr = json_array(), *v;
    const char *k, *token = json_string_value(json_object_get(sb, "envd_access_token"));
    char *kv;

    json_object_foreach(json_object_get(sb, "env"), k, v)
    {
        if (!json_is_string(v) || !*k || strchr(k, '=') || strcmp(k, ENVD_TOKEN_ENV) == 0)
            continue;
        env_add(arr, k, json_string_value(v));
    }
    if (via_proxy)
        sandbox_proxy_env(arr, 1);
    if (token && *token && asprintf(&kv, "%s=%s", ENVD_TOKEN_ENV, token) >= 0) {
        json_array_append_new(arr, json_string(kv));
        explicit_bzero(kv, strlen(kv));
        free(kv);
    }
    return arr;
}

static json_int_t int_or(json_t *sb, const char *key, json_int_t dflt)
{
    json_t *v = json_object_get(sb, key);

    return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : dflt;
}

static void set_limits(json_t *hc, json_t *sb, int disk_quota)
{
    double cpu = json_number_value(json_object_get(sb, "cpu_cores"));
    json_int_t mem = json_integer_value(json_object_get(sb, "memory_mb"));
    char size[32];

    if (cpu > 0)
        json_object_set_new(hc, "NanoCpus", json_integer((json_int_t)(cpu * 1e9)));
    if (mem > 0) {
        /* MemorySwap = Memory: no swap, so over the limit means an OOM kill. */
        json_object_set_new(hc, "Memory", json_integer(mem * 1024 * 1024));
        json_object_set_new(hc, "MemorySwap", json_integer(mem * 1024 * 1024));
    }
    json_object_set_new(hc, "PidsLimit",
                        json_integer(int_or(sb, "pids_limit", SANDBOX_PIDS_DEFAULT)));
    if (disk_quota) {
        snprintf(size, sizeof(size), "%lldM",
                 (long long)int_or(sb, "disk_mb", SANDBOX_DISK_MB_DEFAULT));
        json_object_set_new(hc, "StorageOpt", json_pack("{s:s}", "size", size));
    }
}

json_t *sandbox_limits(json_t *sb)
{
    json_t *o = json_object();

    if (o)
        set_limits(o, sb, 0);
    return o;
}

static json_t *host_config(const struct worker_conf *c, json_t *sb, const struct sandbox_net *net)
{
    json_t *hc = json_object();
    const char *rt = json_string_value(json_object_get(sb, "runtime"));
    char bind[WCONF_STR + 64];

    json_object_set_new(hc, "Runtime", json_string(rt && *rt ? rt : "runc"));
    set_limits(hc, sb, net->disk_quota);
    snprintf(bind, sizeof(bind), "%s:%s:ro", c->envd_bin, ENVD_MOUNT);
    json_object_set_new(hc, "Binds", json_pack("[s]", bind));

    json_object_set_new(hc, "NetworkMode", json_string(net->network));
    json_object_set_new(hc, "Mounts", volumes_mounts(sb));
    json_object_set_new(
        hc, "CapDrop",
        json_pack("[s,s,s,s,s]", "NET_RAW", "MKNOD", "SETFCAP", "SETPCAP", "SYS_CHROOT"));
    return hc;
}

/* envd's flags: its port, the environment changes it applies at start, and
 * whether a signed URL must carry an expiry. */
static json_t *envd_cmd(const struct worker_conf *c)
{
    json_t *cmd = json_pack("[s,s,s,s]", "-port", ENVD_PORT_STR, "-net-env",
                            ENVD_NET_ENV_DIR "/" ENVD_NET_ENV_FILE);

    if (c->envd_require_signature_expiration) {
        json_array_append_new(cmd, json_string("-signature-expiration"));
        json_array_append_new(cmd, json_string("required"));
    }
    return cmd;
}

/* envd is the entrypoint (PID 1: it also reaps orphans) and runs as root, so
 * that it can start each process as the user a request names ("user", uid
 * 1000, in the templates) whatever USER the image declares. */
json_t *sandbox_body(const struct worker_conf *c, const struct wtemplate *t, const char *wid,
                     json_t *sb, const struct sandbox_net *net)
{
    char disk[24];
    json_t *labels;

    /* The disk limit as a label: the metrics thread reads it back as diskTotal
     * whether or not dockerd enforces it (telemetry.c). */
    snprintf(disk, sizeof(disk), "%lld", (long long)int_or(sb, "disk_mb", SANDBOX_DISK_MB_DEFAULT));
    labels =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "corral.sandbox",
                  json_string_value(json_object_get(sb, "id")), "corral.workspace",
                  json_string_value(json_object_get(sb, "workspace")) ?: "", "corral.worker", wid,
                  "corral.tier", json_string_value(json_object_get(sb, "tier")) ?: "UNKNOWN",
                  "corral.template", t->name, "corral.role", "sandbox", "corral.disk_mb", disk);

    return json_pack("{s:s, s:o, s:o, s:[s], s:o, s:s, s:{s:{}}, s:o, s:{s:{s:{}}}}", "Image",
                     t->image, "Labels", labels, "Env", env_array(sb, net->via_proxy), "Entrypoint",
                     ENVD_MOUNT, "Cmd", envd_cmd(c), "User", "0", "ExposedPorts",
                     ENVD_PORT_STR "/tcp", "HostConfig", host_config(c, sb, net),
                     "NetworkingConfig", "EndpointsConfig", net->network);
}
