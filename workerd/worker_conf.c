#include "worker_conf.h"

#include "agent.h"

#include "config.h"
#include "secret.h"
#include "token.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static long mem_total_mb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long kb = 0;

    if (!f)
        return 1024;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemTotal: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb > 0 ? kb / 1024 : 1024;
}

/* envd and corral-egress ship next to workerd: <directory of /proc/self/exe>/NAME. */
void wconf_default_bin(char *out, size_t len, const char *name)
{
    char exe[WCONF_STR];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    char *slash;

    if (n <= 0) {
        snprintf(out, len, "/usr/lib/corral/%s", name);
        return;
    }
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, len, "%.*s/%s", (int)(len > strlen(name) + 2 ? len - strlen(name) - 2 : 0), exe,
             name);
}

void wconf_defaults(struct worker_conf *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->docker_socket, sizeof(c->docker_socket), "/var/run/docker.sock");
    snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/corral-workerd");
    snprintf(c->data_addr, sizeof(c->data_addr), "127.0.0.1:7001");
    snprintf(c->probe_image, sizeof(c->probe_image), "corral/base");
    if (gethostname(c->hostname, sizeof(c->hostname) - 1) != 0)
        snprintf(c->hostname, sizeof(c->hostname), "unknown");
    c->cpu_overcommit = WCONF_DEFAULT_OVERCOMMIT;
    c->memory_mb = mem_total_mb();
    c->backoff_max_ms = 30000;
    c->probe_timeout_ms = 60000;
    c->envd_ready_ms = 10000;
    c->egress_pool = 4;
    c->fast_remove = 0; /* opt-in: decision 0086, "Off by default" */
    c->metrics_interval_ms = 5000;
    c->layer_cache_max_age_s = 7 * 86400;
    wconf_default_bin(c->envd_bin, sizeof(c->envd_bin), "envd");
    wconf_default_bin(c->egress_bin, sizeof(c->egress_bin), "corral-egress");
    snprintf(c->egress_image, sizeof(c->egress_image), "corral/base");
    snprintf(c->egress_roots, sizeof(c->egress_roots), "/etc/ssl/certs/ca-certificates.crt");
    snprintf(c->egress_subnet, sizeof(c->egress_subnet), "10.199.0.0/16");
}

static int set_str(char *dst, size_t len, const char *value, char *err, size_t errlen)
{
    if (strlen(value) >= len) {
        snprintf(err, errlen, "value longer than %zu characters", len - 1);
        return -1;
    }
    snprintf(dst, len, "%s", value);
    return 0;
}

static int set_long(long *dst, const char *value, long min, long max, char *err, size_t errlen)
{
    if (config_parse_int(value, min, max, dst) != 0) {
        snprintf(err, errlen, "expected an integer in [%ld, %ld]", min, max);
        return -1;
    }
    return 0;
}

static int set_cpu(double *dst, const char *value, double max, char *err, size_t errlen)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(value, &end);
    if (errno || end == value || *end != '\0' || !(v > 0) || v > max) {
        snprintf(err, errlen, "expected a number in (0, %g]", max);
        return -1;
    }
    *dst = v;
    return 0;
}

void wconf_capacity(struct worker_conf *c, long nproc)
{
    if (c->cpu_cores <= 0)
        c->cpu_cores = (double)(nproc > 0 ? nproc : 1) * c->cpu_overcommit;
    if (c->slots <= 0) {
        c->slots = c->memory_mb / WCONF_DEFAULT_SANDBOX_MB;
        c->slots = c->slots < 1 ? 1 : c->slots > 10000 ? 10000 : c->slots;
    }
}

static int name_ok(const char *s, size_t len)
{
    if (len == 0 || len > 64)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!(s[i] == '-' || s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

static struct wtemplate *template_get(struct worker_conf *c, const char *name, size_t len)
{
    for (int i = 0; i < c->n_templates; i++)
        if (strlen(c->templates[i].name) == len && strncmp(c->templates[i].name, name, len) == 0)
            return &c->templates[i];
    if (c->n_templates == WCONF_MAX_TEMPLATES)
        return NULL;
    struct wtemplate *t = &c->templates[c->n_templates++];
    memcpy(t->name, name, len);
    t->name[len] = '\0';
    return t;
}

/* template.NAME = image. A template has no command of its own: every sandbox
 * runs envd as its entrypoint, so the keys that once set one are refused
 * with the reason rather than silently ignored. */
static int set_template(struct worker_conf *c, const char *key, const char *value, char *err,
                        size_t errlen)
{
    const char *name = key + strlen("template."), *dot = strchr(name, '.');
    size_t len = dot ? (size_t)(dot - name) : strlen(name);
    struct wtemplate *t;

    if (!name_ok(name, len)) {
        snprintf(err, errlen, "template names are 1-64 of [a-z0-9_-]");
        return -1;
    }
    t = template_get(c, name, len);
    if (!t) {
        snprintf(err, errlen, "more than %d templates", WCONF_MAX_TEMPLATES);
        return -1;
    }
    if (!dot)
        return set_str(t->image, sizeof(t->image), value, err, errlen);
    if (strcmp(dot, ".cmd") == 0 || strcmp(dot, ".entrypoint") == 0 || strcmp(dot, ".mount") == 0) {
        snprintf(err, errlen, "no longer supported: every sandbox runs envd as its entrypoint");
        return -1;
    }
    snprintf(err, errlen, "unknown template key (template.NAME = IMAGE)");
    return -1;
}

struct str_key {
    const char *key;
    size_t off;
};

#define SK(k, f)                                                                                   \
    {                                                                                              \
        k, offsetof(struct worker_conf, f)                                                         \
    }
static const struct str_key str_keys[] = {
    SK("control_url", control_url),     SK("ca_file", ca_file),
    SK("join_token_file", token_file),  SK("data_addr", data_addr),
    SK("docker_socket", docker_socket), SK("state_dir", state_dir),
    SK("hostname", hostname),           SK("probe_image", probe_image),
    SK("envd_bin", envd_bin),           SK("egress_bin", egress_bin),
    SK("egress_image", egress_image),   SK("egress_hosts", egress_hosts),
    SK("egress_roots", egress_roots),   SK("dns_servers", dns_servers),
};

static int set_on_off(int *out, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0) {
        snprintf(err, errlen, "expected on or off");
        return -1;
    }
    *out = strcmp(value, "on") == 0;
    return 0;
}

/* Behind NAT (decision 0087): nothing connects here, so the data port
 * listens on a unix socket the tunnel thread alone connects to, not TCP. */
static int tunnel_finish(struct worker_conf *c, char *err, size_t errlen)
{
    char path[WCONF_STR];

    if (!c->tunnel)
        return 0;
    if ((size_t)snprintf(path, sizeof(path), "unix:%s/dataport.sock", c->state_dir) >=
            sizeof(path) ||
        strlen(path) - 5 >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        snprintf(err, errlen, "tunnel: state_dir %s is too long for a unix socket path",
                 c->state_dir);
        return -1;
    }
    snprintf(c->data_addr, sizeof(c->data_addr), "%s", path);
    return 0;
}

/* Decision 0035: optional (E2B's SDK signs /files URLs without an expiry by
 * default) or required (such URLs are refused by every sandbox's envd). */
static int set_signature_expiration(struct worker_conf *c, const char *value, char *err,
                                    size_t errlen)
{
    if (strcmp(value, "optional") != 0 && strcmp(value, "required") != 0) {
        snprintf(err, errlen, "expected optional or required");
        return -1;
    }
    c->envd_require_signature_expiration = strcmp(value, "required") == 0;
    return 0;
}

int wconf_set(void *ud, const char *key, const char *value, char *err, size_t errlen)
{
    struct worker_conf *c = ud;

    for (size_t i = 0; i < sizeof(str_keys) / sizeof(str_keys[0]); i++)
        if (strcmp(key, str_keys[i].key) == 0)
            return set_str((char *)c + str_keys[i].off, WCONF_STR, value, err, errlen);
    if (strcmp(key, "egress_subnet") == 0)
        return set_str(c->egress_subnet, sizeof(c->egress_subnet), value, err, errlen);
    if (strcmp(key, "slots") == 0)
        return set_long(&c->slots, value, 1, 10000, err, errlen);
    if (strcmp(key, "memory_mb") == 0)
        return set_long(&c->memory_mb, value, 16, 1L << 30, err, errlen);
    if (strcmp(key, "backoff_max_ms") == 0)
        return set_long(&c->backoff_max_ms, value, 100, 600000, err, errlen);
    if (strcmp(key, "probe_timeout_ms") == 0)
        return set_long(&c->probe_timeout_ms, value, 1000, 600000, err, errlen);
    if (strcmp(key, "envd_ready_ms") == 0)
        return set_long(&c->envd_ready_ms, value, 100, 600000, err, errlen);
    if (strcmp(key, "egress_pool") == 0)
        return set_long(&c->egress_pool, value, 0, 16, err, errlen);
    if (strcmp(key, "warm_pool") == 0) {
        c->warm_set = 1;
        return warm_conf_parse(value, c->warm, &c->n_warm, err, errlen);
    }
    if (strcmp(key, "fast_remove") == 0)
        return set_long(&c->fast_remove, value, 0, 1, err, errlen);
    if (strcmp(key, "tunnel") == 0)
        return set_on_off(&c->tunnel, value, err, errlen);
    if (strcmp(key, "layer_cache_max_age_s") == 0)
        return set_long(&c->layer_cache_max_age_s, value, 0, 10L * 365 * 86400, err, errlen);
    if (strcmp(key, "metrics_interval_ms") == 0)
        return set_long(&c->metrics_interval_ms, value, 250, 3600000, err, errlen);
    if (strcmp(key, "cpu_cores") == 0)
        return set_cpu(&c->cpu_cores, value, 4096, err, errlen);
    if (strcmp(key, "cpu_overcommit") == 0)
        return set_cpu(&c->cpu_overcommit, value, 1000, err, errlen);
    if (strcmp(key, "envd_signature_expiration") == 0)
        return set_signature_expiration(c, value, err, errlen);
    if (strncmp(key, "template.", 9) == 0)
        return set_template(c, key, value, err, errlen);
    int rc = agent_conf_set(&c->agent, key, value, err, errlen);
    if (rc <= 0)
        return rc;
    snprintf(err, errlen, "unknown key");
    return -1;
}

/* The token file must exist, be readable only by its owner, and hold a join
 * token. The message names the file, never its content. */
static int load_token(struct worker_conf *c, char *err, size_t errlen)
{
    struct token tk;
    char why[WCONF_STR + 128];

    if (secret_read_file(c->token_file, c->join_token, sizeof(c->join_token), why, sizeof(why)) !=
        0) {
        snprintf(err, errlen, "join_token_file %s", why);
        return -1;
    }
    token_parse(c->join_token, &tk);
    if (tk.kind != TOKEN_JOIN) {
        snprintf(err, errlen, "join_token_file %s: does not hold a join token (jn_...)",
                 c->token_file);
        return -1;
    }
    return 0;
}

/* A bind-mounted binary must be an absolute path to an executable regular
 * file: a missing source would otherwise become an empty directory in every
 * container. */
int wconf_check_bin(const char *key, const char *path, char *err, size_t errlen)
{
    struct stat st;

    if (path[0] != '/') {
        snprintf(err, errlen, "%s %s: must be an absolute path", key, path);
        return -1;
    }
    if (stat(path, &st) != 0) {
        const char *base = strrchr(path, '/');
        snprintf(err, errlen, "%s %s: %s (build it with make build/bin/%s)", key, path,
                 strerror(errno), base ? base + 1 : path);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
        snprintf(err, errlen, "%s %s: not an executable file", key, path);
        return -1;
    }
    return 0;
}

int wconf_warm_default(struct worker_conf *c, char *err, size_t errlen)
{
    if (c->warm_set || c->agent.on || !wconf_template(c, "base"))
        return 0;
    return warm_conf_parse(WCONF_DEFAULT_WARM, c->warm, &c->n_warm, err, errlen);
}

int wconf_finish(struct worker_conf *c, char *err, size_t errlen)
{
    static const char *const required[] = {"control_url", "ca_file", "join_token_file"};

    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        for (size_t k = 0; k < sizeof(str_keys) / sizeof(str_keys[0]); k++)
            if (strcmp(str_keys[k].key, required[i]) == 0 &&
                ((char *)c + str_keys[k].off)[0] == '\0') {
                snprintf(err, errlen, "%s: required", required[i]);
                return -1;
            }
    }
    if (strncmp(c->control_url, "https://", 8) != 0) {
        snprintf(err, errlen, "control_url: must start with https://");
        return -1;
    }
    if (access(c->ca_file, R_OK) != 0) {
        snprintf(err, errlen, "ca_file %s: %s", c->ca_file, strerror(errno));
        return -1;
    }
    if (c->agent.on && c->n_templates > 0) {
        snprintf(err, errlen, "template.%s: an agent has no images; -template NAME names its one",
                 c->templates[0].name);
        return -1;
    }
    if (c->agent.on && agent_conf_finish(c, err, errlen) != 0)
        return -1;
    for (int i = 0; i < c->n_templates; i++)
        if (c->templates[i].image[0] == '\0') {
            snprintf(err, errlen, "template.%s: no image", c->templates[i].name);
            return -1;
        }
    if (c->n_templates == 0) {
        snprintf(err, errlen, "no template.NAME = IMAGE configured");
        return -1;
    }
    if (wconf_check_bin("envd_bin", c->envd_bin, err, errlen) != 0)
        return -1;
    if (wconf_warm_default(c, err, errlen) != 0 || tunnel_finish(c, err, errlen) != 0)
        return -1;
    wconf_capacity(c, sysconf(_SC_NPROCESSORS_ONLN));
    return load_token(c, err, errlen);
}

const struct wtemplate *wconf_template(const struct worker_conf *c, const char *name)
{
    for (int i = 0; i < c->n_templates; i++)
        if (strcmp(c->templates[i].name, name) == 0)
            return &c->templates[i];
    return NULL;
}

void wconf_free(struct worker_conf *c)
{
    memset(c->join_token, 0, sizeof(c->join_token));
}
