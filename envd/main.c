/*
 * envd entry point: flags, the access token, signals, then the server.
 *
 *   envd [-port 49983] [-addr 0.0.0.0] [-access-token-file PATH] [-user user]
 *        [-passwd /etc/passwd] [-group /etc/group]
 *        [-signature-expiration optional|required] [-net-env PATH] [-agent]
 *        [-warm] [-version]
 *        [gate flags: see gate.h and README.md]
 *
 * -agent (workerd -mode agent): envd runs on the host as the user who started
 * it; every SDK user name means that user, nothing switches identity, and it
 * listens on loopback only (-addr defaults to 127.0.0.1).
 *
 * The access token comes from -access-token-file or from the environment
 * variable CORRAL_ENVD_ACCESS_TOKEN, which is removed from envd's environment
 * before anything else happens: processes inherit that environment, and must
 * never see the token.
 *
 * -warm (a warm sandbox, decision 0082): no token at start; the secret in
 * CORRAL_ENVD_INIT_TOKEN (taken and wiped likewise) is what POST /init needs,
 * which brings the token, env vars and user when workerd claims it.
 */
#include "envd.h"
#include "gate.h"
#include "init.h"
#include "interp_launch.h"
#include "egress_trust.h"
#include "net_env.h"
#include "reaper.h"
#include "server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_ENV "CORRAL_ENVD_ACCESS_TOKEN"
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct envd_config envd_cfg = {
    .port = 49983,
    .listen_addr = "0.0.0.0",
    .default_user = "user",
    .passwd_path = "/etc/passwd",
    .group_path = "/etc/group",
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: envd [-port N] [-addr IPv4] [-access-token-file PATH] [-user NAME]\n"
            "            [-passwd FILE] [-group FILE] [-signature-expiration optional|required]\n"
            "            [-net-env PATH] [-agent] [-warm] [-version]\n"
            "  permission gate (decision 0053): [-permission-mode prompt|strict] [-work-tree DIR]\n"
            "            [-gate-dir DIR] [-policy FILE] [-hardlock PATH]... [-gate-tty PATH]\n"
            "            [-ask-timeout SECONDS] [-os-sandbox bwrap] [-sandbox-id ID]\n"
            "  the token may also come from $%s\n",
            TOKEN_ENV);
}

/* Trims trailing whitespace (a token file usually ends with a newline). */
static void rtrim(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

static int read_token_file(const char *path)
{
    FILE *f = fopen(path, "re");
    char buf[4096];
    size_t n;

    if (f == NULL) {
        fprintf(stderr, "envd: -access-token-file %s: %s\n", path, strerror(errno));
        return -1;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    rtrim(buf);
    if (buf[0] == '\0') {
        fprintf(stderr, "envd: -access-token-file %s is empty\n", path);
        return -1;
    }
    envd_cfg.access_token = strdup(buf);
    return envd_cfg.access_token ? 0 : -1;
}

static int copy_flag(char *dst, size_t dstsz, const char *name, const char *value)
{
    if (strlen(value) >= dstsz) {
        fprintf(stderr, "envd: %s: value too long\n", name);
        return -1;
    }
    memcpy(dst, value, strlen(value) + 1);
    return 0;
}

/* One flag with its value. 0 ok, 1 handled and exit 0, -1 error. */
/* Whether a signed /files URL must carry an expiry (decision 0035). */
static int signature_expiration_flag(const char *value)
{
    if (strcmp(value, "required") != 0 && strcmp(value, "optional") != 0) {
        fprintf(stderr, "envd: -signature-expiration: expected required or optional, not '%s'\n",
                value);
        return -1;
    }
    envd_cfg.require_signature_expiration = strcmp(value, "required") == 0;
    return 0;
}

static int apply_flag(const char *name, const char *value)
{
    if (strcmp(name, "port") == 0) {
        char *end;
        long p = strtol(value, &end, 10);
        if (*end != '\0' || p <= 0 || p > 65535) {
            fprintf(stderr, "envd: -port: invalid port '%s'\n", value);
            return -1;
        }
        envd_cfg.port = (int)p;
        return 0;
    }
    if (strcmp(name, "addr") == 0)
        return copy_flag(envd_cfg.listen_addr, sizeof(envd_cfg.listen_addr), "-addr", value);
    if (strcmp(name, "access-token-file") == 0)
        return read_token_file(value);
    if (strcmp(name, "user") == 0)
        return copy_flag(envd_cfg.default_user, sizeof(envd_cfg.default_user), "-user", value);
    if (strcmp(name, "passwd") == 0)
        return copy_flag(envd_cfg.passwd_path, sizeof(envd_cfg.passwd_path), "-passwd", value);
    if (strcmp(name, "group") == 0)
        return copy_flag(envd_cfg.group_path, sizeof(envd_cfg.group_path), "-group", value);
    if (strcmp(name, "signature-expiration") == 0)
        return signature_expiration_flag(value);
    if (strcmp(name, "net-env") == 0)
        return copy_flag(envd_cfg.net_env_path, sizeof(envd_cfg.net_env_path), "-net-env", value);
    int gate_rc = gate_flag(name, value);
    if (gate_rc != 1)
        return gate_rc;
    fprintf(stderr, "envd: unknown flag -%s\n", name);
    usage(stderr);
    return -1;
}

static int parse_flags(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *arg = argv[i], *value, *eq;

        if (arg[0] != '-') {
            fprintf(stderr, "envd: unexpected argument '%s'\n", arg);
            return -1;
        }
        arg += arg[1] == '-' ? 2 : 1;
        if (strcmp(arg, "version") == 0) {
            printf("%s\n", ENVD_VERSION);
            return 1;
        }
        if (strcmp(arg, "help") == 0 || strcmp(arg, "h") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(arg, "agent") == 0) {
            envd_cfg.agent = 1;
            continue;
        }
        if (strcmp(arg, "warm") == 0) {
            envd_cfg.warm = 1;
            continue;
        }
        eq = strchr(arg, '=');
        if (eq != NULL) {
            snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
            value = eq + 1;
        } else if (i + 1 < argc) {
            snprintf(name, sizeof(name), "%s", arg);
            value = argv[++i];
        } else {
            fprintf(stderr, "envd: -%s needs a value\n", arg);
            return -1;
        }
        int rc = apply_flag(name, value);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Takes the token from the environment (unless a file gave one) and removes it. */
static int take_token_from_env(void)
{
    const char *env = getenv(TOKEN_ENV);

    if (env != NULL && envd_cfg.access_token == NULL && env[0] != '\0') {
        envd_cfg.access_token = strdup(env);
        if (envd_cfg.access_token == NULL)
            return -1;
        rtrim(envd_cfg.access_token);
    }
    if (env != NULL) {
        /* Overwrite the value in place too: /proc/1/environ keeps the original block. */
        memset((char *)env, 0, strlen(env));
        unsetenv(TOKEN_ENV);
    }
    if (envd_cfg.access_token != NULL)
        envd_cfg.access_token_len = strlen(envd_cfg.access_token);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = parse_flags(argc, argv);

    if (rc != 0 || take_token_from_env() < 0)
        return rc > 0 ? 0 : 2;
    if (init_take_secret(envd_cfg.warm) < 0)
        return 2;
    if (envd_cfg.warm && envd_cfg.access_token != NULL) {
        fprintf(stderr, "envd: -warm takes its access token from /init, not at start\n");
        return 2;
    }
    /* A person's machine: never reachable from its network, only via workerd. */
    if (envd_cfg.agent && strcmp(envd_cfg.listen_addr, "0.0.0.0") == 0)
        snprintf(envd_cfg.listen_addr, sizeof(envd_cfg.listen_addr), "127.0.0.1");
    if (gate_start() < 0)
        return 2;
    /* Before any process exists: each inherits envd's environment. */
    if (envd_cfg.net_env_path[0] &&
        net_env_apply(envd_cfg.net_env_path, (const char *const[])NET_ENV_NAMES) != 0)
        envd_log("-net-env %s: unreadable; the container's environment stays as it was",
                 envd_cfg.net_env_path);
    if (!envd_cfg.agent && geteuid() == 0 && egress_trust_apply() != 0)
        envd_log("the egress proxy's CA could not be added to %s: HTTPS to hosts with rules "
                 "fails verification",
                 EGRESS_CA_BUNDLE);
    if (getenv("PATH") == NULL)
        setenv("PATH", DEFAULT_PATH, 1);
    umask(022);
    reaper_block_signals();
    if (reaper_start() != 0) {
        envd_log("cannot start the reaper thread");
        return 1;
    }
    interp_launch_prepare();
    interp_launch_start(envd_cfg.warm);
    if (envd_cfg.warm)
        envd_log("warm: serving /health and /init until claimed");
    else
        envd_log("default user %s%s, access token %s", envd_cfg.default_user,
                 envd_cfg.agent ? " (agent: the invoking user)" : "",
                 envd_cfg.access_token ? "required" : "not set");
    return server_run(envd_cfg.listen_addr, envd_cfg.port) < 0 ? 1 : 0;
}
