#include "corral_conf.h"

#include "accounts.h"
#include "config.h"
#include "rconn.h"
#include "registry_token.h"
#include "rsentinel.h"
#include "secret.h"

#include <stdio.h>
#include <string.h>

struct int_key {
    const char *name;
    size_t offset;
    long min, max;
};

static const struct int_key int_keys[] = {
    {"redis_port", offsetof(struct corral_conf, redis_port), 1, 65535},
    {"threads", offsetof(struct corral_conf, threads), 2, 1024},
    {"longpoll_max", offsetof(struct corral_conf, longpoll_max), 0, 1024},
    {"create_wait_max", offsetof(struct corral_conf, create_wait_max), 1, 1024},
    {"max_body_bytes", offsetof(struct corral_conf, max_body_bytes), 1024, 64L << 20},
    {"poll_ms", offsetof(struct corral_conf, poll_ms), 100, 300000},
    {"lease_ms", offsetof(struct corral_conf, lease_ms), 500, 3600000},
    {"create_timeout_ms", offsetof(struct corral_conf, create_timeout_ms), 1000, 600000},
    {"grace_ms", offsetof(struct corral_conf, grace_ms), 0, 600000},
    {"sweep_ms", offsetof(struct corral_conf, sweep_ms), 50, 60000},
    {"paused_max_s", offsetof(struct corral_conf, paused_max_s), 1, 30 * 86400},
    {"template_ready_s", offsetof(struct corral_conf, template_ready_s), 0, 3600},
    {"max_templates", offsetof(struct corral_conf, max_templates), 1, 100000},
    {"template_upload_mb", offsetof(struct corral_conf, template_upload_mb), 1, 1 << 20},
    {"template_storage_mb", offsetof(struct corral_conf, template_storage_mb), 1, 1L << 30},
    {"max_builds", offsetof(struct corral_conf, max_builds), 1, 1000},
    {"redis_timeout_ms", offsetof(struct corral_conf, redis_timeout_ms), 10, 60000},
    {"redis_cluster", offsetof(struct corral_conf, redis_cluster), 0, 1},
    {"fleet_share", offsetof(struct corral_conf, fleet_share), 1, 100},
    {"key_rate", offsetof(struct corral_conf, key_rate), 1, 1000000},
    {"key_burst", offsetof(struct corral_conf, key_burst), 1, 1000000},
    {"audit_retention_s", offsetof(struct corral_conf, audit_retention_s), 60, 3650L * 86400},
};

struct str_key {
    const char *name;
    size_t offset;
};

static const struct str_key str_keys[] = {
    {"redis_host", offsetof(struct corral_conf, redis_host)},
    {"redis_socket", offsetof(struct corral_conf, redis_socket)},
    {"redis_user", offsetof(struct corral_conf, redis_user)},
    {"redis_password_file", offsetof(struct corral_conf, redis_password_file)},
    {"redis_sentinels", offsetof(struct corral_conf, redis_sentinels)},
    {"redis_master_name", offsetof(struct corral_conf, redis_master_name)},
    {"redis_sentinel_password_file", offsetof(struct corral_conf, redis_sentinel_password_file)},
    {"tunnel_listen", offsetof(struct corral_conf, tunnel_listen)},
    {"secret_file", offsetof(struct corral_conf, secret_file)},
    {"listen", offsetof(struct corral_conf, listen)},
    {"gateway_secret_file", offsetof(struct corral_conf, gateway_secret_file)},
    {"domain", offsetof(struct corral_conf, domain)},
    {"registry", offsetof(struct corral_conf, registry)},
    {"registry_key", offsetof(struct corral_conf, registry_key)},
    {"registry_service", offsetof(struct corral_conf, registry_service)},
    {"registry_issuer", offsetof(struct corral_conf, registry_issuer)},
    {"registry_url", offsetof(struct corral_conf, registry_url)},
    {"registry_config", offsetof(struct corral_conf, registry_config)},
};

/* Every entry of the list must be host:port: a typo found at start, not at
 * the first failover. */
static int sentinels_check(const char *list, char *err, size_t errlen)
{
    char host[256];
    int port;
    unsigned n = 1;

    for (const char *p = list; (p = strchr(p, ',')) != NULL; p++)
        n++;
    for (unsigned i = 0; i < n; i++)
        if (sentinel_entry(list, i, host, sizeof(host), &port) != 0) {
            snprintf(err, errlen, "entry %u is not host:port", i + 1);
            return -1;
        }
    return 0;
}

/* One host:port (a name, an address, [v6]), or "" for no registry. */
static int registry_check(const char *value, char *err, size_t errlen)
{
    char host[256];
    int port;

    if (!*value ||
        (!strchr(value, ',') && sentinel_entry(value, 0, host, sizeof(host), &port) == 0))
        return 0;
    snprintf(err, errlen, "expected HOST:PORT");
    return -1;
}

/* The signing key, read only when there is a registry to sign for: checked
 * now, so that a wrong file stops corral-api at start, not at the first
 * build. Its text is never part of an error. */
static int registry_key_load(struct corral_conf *c, char *err, size_t errlen)
{
    if (!c->registry[0])
        return 0;
    if (!c->registry_service[0] || !c->registry_issuer[0]) {
        snprintf(err, errlen, "registry_service and registry_issuer must not be empty");
        return -1;
    }
    if (secret_read_file(c->registry_key, c->registry_key_pem, sizeof(c->registry_key_pem), err,
                         errlen) != 0)
        return -1;
    if (registry_key_check(c->registry_key_pem) == 0)
        return 0;
    memset(c->registry_key_pem, 0, sizeof(c->registry_key_pem));
    snprintf(err, errlen, "%s: not an EC P-256 private key in PEM (registry_key)", c->registry_key);
    return -1;
}

/* worker_data_addrs or worker_data_networks. The default address (workerd's
 * own data port on loopback) stands only while the file lists neither: an
 * operator who lists a fleet's network has not asked for the gateway host's
 * loopback too (decision 61). */
static int data_list(struct corral_conf *c, const char *key, const char *value, char *err,
                     size_t errlen)
{
    if (!c->data_listed)
        c->data_allow.naddrs = 0;
    c->data_listed = 1;
    if (strcmp(key, "worker_data_addrs") == 0)
        return data_addr_addrs(&c->data_allow, value, err, errlen);
    return data_addr_networks(&c->data_allow, value, err, errlen);
}

/* tunnel_allow: this host's tunnel ports first (corral-tunneld binds
 * there), then the other gateway hosts' (the gateway connects to either). */
static int tunnel_allow_build(struct corral_conf *c, char *err, size_t errlen)
{
    char list[sizeof(c->tunnel_ports) + sizeof(c->tunnel_peers) + 2];

    snprintf(list, sizeof(list), "%s %s", c->tunnel_ports, c->tunnel_peers);
    return data_addr_addrs(&c->tunnel_allow, list, err, errlen);
}

/* One address and its range of ports ("127.0.0.1:7100-7163"): where
 * corral-tunneld holds tunnels (decision 0087). */
static int tunnel_ports(struct corral_conf *c, const char *value, char *err, size_t errlen)
{
    struct data_addr_allow one;

    if (data_addr_addrs(&one, value, err, errlen) != 0)
        return -1;
    if (one.naddrs != 1 || strlen(value) >= sizeof(c->tunnel_ports)) {
        snprintf(err, errlen, "one address and a range of ports, 127.0.0.1:7100-7163");
        return -1;
    }
    snprintf(c->tunnel_ports, sizeof(c->tunnel_ports), "%s", value);
    return tunnel_allow_build(c, err, errlen);
}

/* The other gateway hosts' tunnel ports ("10.0.0.12:7100-7163 ..."): a
 * worker's tunnel may be held on any of them (decision 0087). */
static int tunnel_peers(struct corral_conf *c, const char *value, char *err, size_t errlen)
{
    struct data_addr_allow peers;

    if (strlen(value) >= sizeof(c->tunnel_peers)) {
        snprintf(err, errlen, "too long (at most %zu bytes)", sizeof(c->tunnel_peers) - 1);
        return -1;
    }
    if (data_addr_addrs(&peers, value, err, errlen) != 0)
        return -1;
    snprintf(c->tunnel_peers, sizeof(c->tunnel_peers), "%s", value);
    return tunnel_allow_build(c, err, errlen);
}

/* A ceiling key (ws_limit_defs[].ceiling_key, or the name decision 0034 gave
 * the concurrency one, still read so that older files load): its index, or -1. */
static int ceiling_index(const char *key)
{
    if (strcmp(key, "workspace_max_concurrent_ceiling") == 0)
        return WS_LIMIT_MAX_CONCURRENT;
    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        if (strcmp(key, ws_limit_defs[i].ceiling_key) == 0)
            return i;
    return -1;
}

/* A ceiling within its limit's own range (at least 1: a ceiling of 0 would
 * refuse every create without saying why). */
static int set_ceiling(struct corral_conf *c, int i, const char *value, char *err, size_t errlen)
{
    const struct ws_limit_def *d = &ws_limit_defs[i];
    long min = d->min > 1 ? d->min : 1;

    if (config_parse_int(value, min, d->max, &c->ceilings[i]) == 0)
        return 0;
    snprintf(err, errlen, "expected an integer in [%ld, %ld]", min, d->max);
    return -1;
}

static int set_key(void *ud, const char *key, const char *value, char *err, size_t errlen)
{
    char *base = ud;
    struct corral_conf *c = ud;
    int ceiling = ceiling_index(key);

    if (ceiling >= 0)
        return set_ceiling(c, ceiling, value, err, errlen);
    if (strcmp(key, "worker_data_networks") == 0 || strcmp(key, "worker_data_addrs") == 0)
        return data_list(c, key, value, err, errlen);
    if (strcmp(key, "worker_data_ports") == 0)
        return data_addr_ports(&c->data_allow, value, err, errlen);
    if (strcmp(key, "tunnel_ports") == 0)
        return tunnel_ports(c, value, err, errlen);
    if (strcmp(key, "tunnel_peers") == 0)
        return tunnel_peers(c, value, err, errlen);
    if (strcmp(key, "redis_sentinels") == 0 && sentinels_check(value, err, errlen) != 0)
        return -1;
    if (strcmp(key, "registry") == 0 && registry_check(value, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(int_keys) / sizeof(int_keys[0]); i++)
        if (strcmp(key, int_keys[i].name) == 0) {
            if (config_parse_int(value, int_keys[i].min, int_keys[i].max,
                                 (long *)(base + int_keys[i].offset)) == 0)
                return 0;
            snprintf(err, errlen, "expected an integer in [%ld, %ld]", int_keys[i].min,
                     int_keys[i].max);
            return -1;
        }
    for (size_t i = 0; i < sizeof(str_keys) / sizeof(str_keys[0]); i++)
        if (strcmp(key, str_keys[i].name) == 0) {
            if (strlen(value) >= 256) {
                snprintf(err, errlen, "longer than 255 characters");
                return -1;
            }
            snprintf(base + str_keys[i].offset, 256, "%s", value);
            return 0;
        }
    snprintf(err, errlen, "unknown key");
    return -1;
}

int corral_conf_load(const char *path, struct corral_conf *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->redis_host, sizeof(c->redis_host), "127.0.0.1");
    c->redis_port = 6379;
    snprintf(c->redis_user, sizeof(c->redis_user), "corral");
    snprintf(c->redis_password_file, sizeof(c->redis_password_file), "/etc/corral/redis-password");
    snprintf(c->redis_master_name, sizeof(c->redis_master_name), "corral");
    snprintf(c->secret_file, sizeof(c->secret_file), "/etc/corral/secret");
    snprintf(c->listen, sizeof(c->listen), "/run/corral/api.sock");
    snprintf(c->gateway_secret_file, sizeof(c->gateway_secret_file), "/etc/corral/gateway-secret");
    c->threads = 64;
    c->longpoll_max = 16;
    c->create_wait_max = 40;
    c->max_body_bytes = 1 << 20;
    c->poll_ms = 20000;
    c->lease_ms = 45000;
    c->create_timeout_ms = 60000;
    c->grace_ms = 5000;
    c->sweep_ms = 250; /* a deadline is acted on within this (decision 0044) */
    c->paused_max_s = 86400;
    c->max_templates = 100;         /* a workspace's, decision 0080 */
    c->template_upload_mb = 1024;   /* a workspace's COPY uploads per 24 h */
    c->template_storage_mb = 20480; /* 20 GiB of a workspace's own layers, decision 0081 */
    c->max_builds = 4;
    c->redis_timeout_ms = 1000;
    data_addr_defaults(&c->data_allow);
    snprintf(c->tunnel_listen, sizeof(c->tunnel_listen), "/run/corral/tunneld/tunneld.sock");
    snprintf(c->tunnel_ports, sizeof(c->tunnel_ports), "127.0.0.1:7100-7163");
    (void)data_addr_addrs(&c->tunnel_allow, c->tunnel_ports, err, errlen); /* a constant */
    /* Decision 0034: half the shared fleet per tenant. */
    c->fleet_share = 50;
    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        c->ceilings[i] = ws_limit_defs[i].ceiling_dflt;
    c->key_rate = 50;
    c->key_burst = 200;
    c->audit_retention_s = AUDIT_RETENTION_DEFAULT_S;
    snprintf(c->registry_key, sizeof(c->registry_key), "/etc/corral/registry.key");
    snprintf(c->registry_service, sizeof(c->registry_service), "corral-registry");
    snprintf(c->registry_issuer, sizeof(c->registry_issuer), "corral");
    snprintf(c->registry_config, sizeof(c->registry_config), "/etc/docker/registry/config.yml");
    if (path && config_load(path, set_key, c, err, errlen) != 0)
        return -1;
    /* Blocking waits must leave threads free, or heartbeats (which unblock the
     * creates) could find none: a deadlock until timeouts. */
    if (c->longpoll_max + c->create_wait_max >= c->threads) {
        snprintf(err, errlen, "longpoll_max + create_wait_max (%ld) must be below threads (%ld)",
                 c->longpoll_max + c->create_wait_max, c->threads);
        return -1;
    }
    if (c->lease_ms <= c->poll_ms) {
        snprintf(err, errlen, "lease_ms (%ld) must exceed poll_ms (%ld)", c->lease_ms, c->poll_ms);
        return -1;
    }
    if (c->redis_sentinel_password_file[0] &&
        secret_load_file(c->redis_sentinel_password_file, c->redis_sentinel_password,
                         sizeof(c->redis_sentinel_password), err, errlen) != 0)
        return -1;
    if (secret_load_file(c->secret_file, c->server_secret, sizeof(c->server_secret), err, errlen) !=
            0 ||
        secret_load_file(c->redis_password_file, c->redis_password, sizeof(c->redis_password), err,
                         errlen) != 0 ||
        registry_key_load(c, err, errlen) != 0)
        return -1;
    return secret_load_file(c->gateway_secret_file, c->gateway_secret, sizeof(c->gateway_secret),
                            err, errlen);
}

void corral_conf_rconn(const struct corral_conf *c, struct rconn *rc)
{
    rconn_init(rc, c->redis_host, (int)c->redis_port, c->redis_socket, (int)c->redis_timeout_ms);
    rconn_set_auth(rc, c->redis_user, c->redis_password);
    rconn_set_sentinels(rc, c->redis_sentinels, c->redis_master_name, c->redis_sentinel_password);
    rconn_set_cluster(rc, (int)c->redis_cluster);
}

int corral_conf_set(struct corral_conf *c, const char *key, const char *value, char *err,
                    size_t errlen)
{
    return set_key(c, key, value, err, errlen);
}
