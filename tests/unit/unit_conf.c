/* Unit tests of common/corral_conf.c: a good corral.conf loads with its
 * values, and every refusal says which key (and line) and why: unknown keys,
 * integers out of range, over-long strings, lines without "=", the thread
 * budget and the lease rule, data-port addresses and networks (loopback only
 * as exact addresses, the default only while neither is listed), the
 * operator's ceilings over workspace limits (decision 0063), the secret
 * files (missing, readable by others, too short), and the registry's keys
 * (decision 0079: its signing key read only when a registry is named, owner
 * only, EC P-256, never quoted in an error). */
#include "check.h"
#include "corral_conf.h"

#include <fcntl.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void unit_conf(int *total_passed, int *total_failed);

static int passed, failed;

static char dir[] = "/tmp/unit-conf-XXXXXX";
static char secret[256], conf[256];

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    if (fd >= 0) {
        CHECK(fchmod(fd, mode) == 0);
        close(fd);
    }
}

/* Writes corral.conf: the three secret files pointing at the good secret,
 * then body. */
static void write_conf(const char *body)
{
    char text[2048];

    snprintf(text, sizeof(text),
             "secret_file = %s\ngateway_secret_file = %s\nredis_password_file = %s\n%s", secret,
             secret, secret, body);
    write_file(conf, text, 0600);
}

/* 1 when body is refused with exactly want (a "%s" in want is the conf path). */
static int refused(const char *body, const char *want)
{
    struct corral_conf c;
    char err[512] = "", expect[512];
    int rv;

    write_conf(body);
    rv = corral_conf_load(conf, &c, err, sizeof(err));
    snprintf(expect, sizeof(expect), want, conf);
    if (rv != -1 || strcmp(err, expect) != 0) {
        fprintf(stderr, "conf \"%s\": rv %d, err \"%s\", expected \"%s\"\n", body, rv, err, expect);
        return 0;
    }
    return 1;
}

static int accepted(const char *body)
{
    struct corral_conf c;
    char err[512] = "";

    write_conf(body);
    return corral_conf_load(conf, &c, err, sizeof(err)) == 0;
}

static void test_good(void)
{
    struct corral_conf c;
    char err[256] = "";

    write_conf("# a comment\n\nredis_port = 6380  # trailing comment\n"
               "  domain=sb.example.com  \nthreads = 100\nlongpoll_max = 20\n"
               "create_wait_max = 60\nworker_data_ports = 7000-7100\n");
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == 0 && err[0] == '\0');
    CHECK(c.redis_port == 6380 && strcmp(c.domain, "sb.example.com") == 0 && c.threads == 100 &&
          c.longpoll_max == 20 && c.create_wait_max == 60);
    CHECK(c.data_allow.nports == 1 && c.data_allow.port_lo[0] == 7000 &&
          c.data_allow.port_hi[0] == 7100);
    /* untouched keys keep their defaults; the secrets were read, trimmed */
    CHECK(strcmp(c.redis_host, "127.0.0.1") == 0 && c.poll_ms == 20000 && c.lease_ms == 45000 &&
          c.key_rate == 50 && c.key_burst == 200 && strcmp(c.redis_user, "corral") == 0);
    CHECK(c.audit_retention_s == 30L * 86400);
    /* decision 0044: deadlines acted on within a sweep, a day paused at most */
    CHECK(c.sweep_ms == 250 && c.paused_max_s == 86400 && c.ceilings[WS_LIMIT_TIMEOUT] == 86400);
    CHECK(strcmp(c.server_secret, "00112233445566778899aabbccddeeff") == 0 &&
          strcmp(c.gateway_secret, c.server_secret) == 0 &&
          strcmp(c.redis_password, c.server_secret) == 0);
}

static void test_refusals(void)
{
    char body[600], want[300];

    /* the line, the key, and why */
    CHECK(refused("nosuch = 1\n", "%s:4: nosuch: unknown key"));
    CHECK(refused("redis_host\n", "%s:4: expected key = value"));
    CHECK(refused("redis_port = 0\n", "%s:4: redis_port: expected an integer in [1, 65535]"));
    CHECK(refused("redis_port = 65536\n", "%s:4: redis_port: expected an integer in [1, 65535]"));
    CHECK(refused("redis_port = 80x\n", "%s:4: redis_port: expected an integer in [1, 65535]"));
    CHECK(refused("redis_port =\n", "%s:4: redis_port: expected an integer in [1, 65535]"));
    CHECK(refused("threads = 1\n", "%s:4: threads: expected an integer in [2, 1024]"));
    CHECK(refused("\n# x\nmax_body_bytes = 1023\n",
                  "%s:6: max_body_bytes: expected an integer in [1024, 67108864]"));
    CHECK(refused("poll_ms = 99\n", "%s:4: poll_ms: expected an integer in [100, 300000]"));
    CHECK(refused("key_rate = 0\n", "%s:4: key_rate: expected an integer in [1, 1000000]"));
    CHECK(refused("paused_max_s = 0\n", "%s:4: paused_max_s: expected an integer in [1, 2592000]"));
    CHECK(refused("sandbox_max_timeout_s = 86401\n",
                  "%s:4: sandbox_max_timeout_s: expected an integer in [1, 86400]"));
    CHECK(refused("audit_retention_s = 59\n",
                  "%s:4: audit_retention_s: expected an integer in [60, 315360000]"));
    CHECK(refused("audit_retention_s = 315360001\n",
                  "%s:4: audit_retention_s: expected an integer in [60, 315360000]"));
    CHECK(refused("audit_retention_s = 1d\n",
                  "%s:4: audit_retention_s: expected an integer in [60, 315360000]"));
    CHECK(accepted("audit_retention_s = 60\n"));
    CHECK(accepted("redis_sentinels = 127.0.0.1:26379, [::1]:26380,s3.example:26381\n"));
    CHECK(refused("redis_sentinels = 127.0.0.1:26379,127.0.0.1\n",
                  "%s:4: redis_sentinels: entry 2 is not host:port"));
    CHECK(refused("redis_sentinels = :26379\n", "%s:4: redis_sentinels: entry 1 is not host:port"));
    CHECK(refused("redis_sentinels = a:0\n", "%s:4: redis_sentinels: entry 1 is not host:port"));
    CHECK(
        refused("redis_sentinels = a:1,,b:2\n", "%s:4: redis_sentinels: entry 2 is not host:port"));
    CHECK(refused("redis_sentinels = [::1:5\n", "%s:4: redis_sentinels: entry 1 is not host:port"));
    CHECK(refused("fleet_share = 101\n", "%s:4: fleet_share: expected an integer in [1, 100]"));
    memset(want, 'd', 256);
    want[256] = '\0';
    snprintf(body, sizeof(body), "domain = %s\n", want);
    CHECK(refused(body, "%s:4: domain: longer than 255 characters"));
    want[255] = '\0'; /* 255 characters fit */
    snprintf(body, sizeof(body), "domain = %s\n", want);
    CHECK(accepted(body));
    CHECK(refused("worker_data_networks = 169.254.0.0/16\n",
                  "%s:4: worker_data_networks: 169.254.0.0/16: covers link-local, where cloud "
                  "metadata answers (169.254.0.0/16), never a worker address"));
    CHECK(refused("worker_data_networks = 10.0.0.1/8\n",
                  "%s:4: worker_data_networks: 10.0.0.1/8: host bits are set after the /8"));
    CHECK(refused("worker_data_ports = 0-10\n",
                  "%s:4: worker_data_ports: 0-10: not a port or a range LOW-HIGH of ports "
                  "1-65535"));
    /* rules between keys, checked once the whole file is read */
    CHECK(refused("threads = 56\n",
                  "longpoll_max + create_wait_max (56) must be below threads (56)"));
    CHECK(accepted("threads = 57\n"));
    CHECK(refused("poll_ms = 45000\n", "lease_ms (45000) must exceed poll_ms (45000)"));
    CHECK(accepted("lease_ms = 500\npoll_ms = 100\n"));
}

/* c's data ports once body loads, checked for addr: 1 when allowed. */
static int data_allows(const char *body, const char *addr)
{
    struct corral_conf c;
    char err[512] = "", why[192];

    write_conf(body);
    if (corral_conf_load(conf, &c, err, sizeof(err)) != 0) {
        fprintf(stderr, "conf \"%s\": %s\n", body, err);
        return -1;
    }
    return data_addr_check(&c.data_allow, addr, strlen(addr), NULL, why, sizeof(why)) == 0;
}

/* c's tunnel ports once body loads: 1 when addr is allowed and the first
 * address (the one corral-tunneld binds) is own; -1 on a load error. */
static int tunnel_allows(const char *body, const char *addr, const char *own)
{
    struct corral_conf c;
    char err[512] = "", why[192], first[64];

    write_conf(body);
    if (corral_conf_load(conf, &c, err, sizeof(err)) != 0) {
        fprintf(stderr, "conf \"%s\": %s\n", body, err);
        return -1;
    }
    inet_ntop(AF_INET, c.tunnel_allow.addrs[0].addr, first, sizeof(first));
    if (strcmp(first, own) != 0)
        return 0;
    return data_addr_check(&c.tunnel_allow, addr, strlen(addr), NULL, why, sizeof(why)) == 0;
}

/* Issue 25, decision 61: the gateway connects to the addresses and ports
 * listed, and to no other port of its host's loopback. */
static void test_data_addrs(void)
{
    /* default: workerd's own data port only */
    CHECK(data_allows("", "127.0.0.1:7001") == 1);
    CHECK(data_allows("", "127.0.0.1:6390") == 0);
    CHECK(data_allows("", "[::1]:7001") == 0);
    /* listed exactly, replacing the default */
    CHECK(data_allows("worker_data_addrs = 127.0.0.1:7002 [::1]:7003\n", "127.0.0.1:7002") == 1);
    CHECK(data_allows("worker_data_addrs = 127.0.0.1:7002 [::1]:7003\n", "[::1]:7003") == 1);
    CHECK(data_allows("worker_data_addrs = 127.0.0.1:7002 [::1]:7003\n", "127.0.0.1:7001") == 0);
    /* a fleet's network: the default loopback address is gone, ports as listed */
    CHECK(data_allows("worker_data_networks = 10.0.0.0/24\n", "127.0.0.1:7001") == 0);
    CHECK(data_allows("worker_data_networks = 10.0.0.0/24\n", "10.0.0.4:7001") == 1);
    CHECK(data_allows("worker_data_networks = 10.0.0.0/24\n", "10.0.0.4:7002") == 0);
    CHECK(data_allows("worker_data_ports = 8000\nworker_data_networks = 10.0.0.0/24\n",
                      "10.0.0.4:8000") == 1);
    /* both, in either order */
    CHECK(data_allows("worker_data_networks = 10.0.0.0/24\nworker_data_addrs = 127.0.0.1:7001\n",
                      "127.0.0.1:7001") == 1);
    CHECK(data_allows("worker_data_addrs = 127.0.0.1:7001\nworker_data_networks = 10.0.0.0/24\n",
                      "127.0.0.1:7001") == 1);
    CHECK(data_allows("worker_data_addrs = 127.0.0.1:7001\nworker_data_networks = 10.0.0.0/24\n",
                      "10.0.0.9:7001") == 1);
    /* refused at load, naming the key, the entry and why */
    CHECK(refused("worker_data_networks = 127.0.0.0/8\nworker_data_ports = 1024-65535\n",
                  "%s:4: worker_data_networks: 127.0.0.0/8: overlaps loopback (127.0.0.0/8), the "
                  "gateway host's own services: list a worker's data port there as an exact "
                  "address, 127.0.0.1:7001"));
    CHECK(refused("worker_data_networks = 10.0.0.0/8 ::1/128\n",
                  "%s:4: worker_data_networks: ::1/128: overlaps loopback (::1/128), the gateway "
                  "host's own services: list a worker's data port there as an exact address, "
                  "127.0.0.1:7001"));
    CHECK(refused("worker_data_addrs = 127.0.0.0/8\n",
                  "%s:4: worker_data_addrs: 127.0.0.0/8: must be an IP address and a port, "
                  "10.0.0.5:7001 or [fd12::5]:7001 (no host name), or a range of ports, "
                  "127.0.0.1:7100-7163"));
    /* corral-tunneld's one address and range of ports (decision 0087) */
    CHECK(refused("tunnel_ports = 127.0.0.1:7100 127.0.0.1:7200\n",
                  "%s:4: tunnel_ports: one address and a range of ports, 127.0.0.1:7100-7163"));
    CHECK(refused("tunnel_ports = 127.0.0.1\n",
                  "%s:4: tunnel_ports: 127.0.0.1: must be an IP address and a port, 10.0.0.5:7001 "
                  "or [fd12::5]:7001 (no host name), or a range of ports, 127.0.0.1:7100-7163"));
    CHECK(accepted("tunnel_ports = 10.0.0.5:9000-9099\ntunnel_listen = /run/t.sock\n"));
    /* other gateway hosts' tunnel ports: allowed beside this host's, in
     * either order; this host's stays first (corral-tunneld binds it) */
    CHECK(tunnel_allows("tunnel_ports = 10.0.0.5:9000-9099\ntunnel_peers = 10.0.0.6:9000-9099 "
                        "10.0.0.7:9000-9099\n",
                        "10.0.0.7:9050", "10.0.0.5") == 1);
    CHECK(tunnel_allows("tunnel_peers = 10.0.0.6:9000-9099\ntunnel_ports = 10.0.0.5:9000-9099\n",
                        "10.0.0.6:9000", "10.0.0.5") == 1);
    CHECK(tunnel_allows("tunnel_peers = 10.0.0.6:9000-9099\n", "10.0.0.6:9100", "127.0.0.1") == 0);
    CHECK(tunnel_allows("tunnel_peers = 10.0.0.6:9000-9099\n", "127.0.0.1:7100", "127.0.0.1") == 1);
    CHECK(refused("tunnel_peers = 10.0.0.6\n",
                  "%s:4: tunnel_peers: 10.0.0.6: must be an IP address and a port, 10.0.0.5:7001 "
                  "or [fd12::5]:7001 (no host name), or a range of ports, 127.0.0.1:7100-7163"));
    CHECK(refused("worker_data_addrs = 169.254.169.254:80\n",
                  "%s:4: worker_data_addrs: 169.254.169.254:80: link-local, where cloud metadata "
                  "answers (169.254.0.0/16), never a worker address"));
}

/* Decision 0063: one ceiling per workspace limit, its default, its own key,
 * and the limit's range as the ceiling's (at least 1). */
static void test_ceilings(void)
{
    struct corral_conf c;
    char err[256] = "";

    write_conf("");
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == 0);
    CHECK(c.ceilings[WS_LIMIT_MAX_CONCURRENT] == 100 && c.ceilings[WS_LIMIT_PIDS] == 4096 &&
          c.ceilings[WS_LIMIT_DISK_MB] == 20480 && c.ceilings[WS_LIMIT_TIMEOUT] == 86400);
    /* every default is within its limit's range and not below its default */
    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        CHECK(ws_limit_defs[i].ceiling_dflt >= ws_limit_defs[i].dflt &&
              ws_limit_defs[i].ceiling_dflt <= ws_limit_defs[i].max);
    write_conf("ceiling_max_concurrent_sandboxes = 7\nceiling_sandbox_pids_limit = 64\n"
               "ceiling_sandbox_disk_mb = 1048576\nsandbox_max_timeout_s = 600\n");
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == 0);
    CHECK(c.ceilings[WS_LIMIT_MAX_CONCURRENT] == 7 && c.ceilings[WS_LIMIT_PIDS] == 64 &&
          c.ceilings[WS_LIMIT_DISK_MB] == 1048576 && c.ceilings[WS_LIMIT_TIMEOUT] == 600);
    /* decision 0034's name for the concurrency ceiling still loads */
    write_conf("workspace_max_concurrent_ceiling = 40\n");
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == 0 &&
          c.ceilings[WS_LIMIT_MAX_CONCURRENT] == 40);
    CHECK(accepted("ceiling_max_concurrent_sandboxes = 100000\n"));
    CHECK(refused("ceiling_max_concurrent_sandboxes = 0\n",
                  "%s:4: ceiling_max_concurrent_sandboxes: expected an integer in [1, 100000]"));
    CHECK(refused("\nceiling_max_concurrent_sandboxes = 100001\n",
                  "%s:5: ceiling_max_concurrent_sandboxes: expected an integer in [1, 100000]"));
    CHECK(refused("workspace_max_concurrent_ceiling = 100001\n",
                  "%s:4: workspace_max_concurrent_ceiling: expected an integer in [1, 100000]"));
    CHECK(refused("ceiling_sandbox_pids_limit = 63\n",
                  "%s:4: ceiling_sandbox_pids_limit: expected an integer in [64, 65536]"));
    CHECK(refused("ceiling_sandbox_pids_limit = 65537\n",
                  "%s:4: ceiling_sandbox_pids_limit: expected an integer in [64, 65536]"));
    CHECK(refused("ceiling_sandbox_disk_mb = 255\n",
                  "%s:4: ceiling_sandbox_disk_mb: expected an integer in [256, 1048576]"));
    CHECK(refused("ceiling_sandbox_disk_mb = 20 GB\n",
                  "%s:4: ceiling_sandbox_disk_mb: expected an integer in [256, 1048576]"));
    CHECK(refused("sandbox_max_timeout_s = 0\n",
                  "%s:4: sandbox_max_timeout_s: expected an integer in [1, 86400]"));
    CHECK(refused("ceiling_sandbox_timeout_s = 60\n",
                  "%s:4: ceiling_sandbox_timeout_s: unknown key"));
}

static void test_secrets(void)
{
    struct corral_conf c;
    char err[512], path[300], want[600], text[600];

    /* the file itself missing */
    snprintf(path, sizeof(path), "%s/absent.conf", dir);
    CHECK(corral_conf_load(path, &c, err, sizeof(err)) == -1);
    snprintf(want, sizeof(want), "%s: No such file or directory", path);
    CHECK(strcmp(err, want) == 0);
    /* a secret file missing, readable by others, too short */
    snprintf(text, sizeof(text), "secret_file = %s/absent\n", dir);
    write_file(conf, text, 0600);
    snprintf(want, sizeof(want), "%s/absent: No such file or directory", dir);
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == -1 && strcmp(err, want) == 0);
    snprintf(path, sizeof(path), "%s/open", dir);
    write_file(path, "00112233445566778899aabbccddeeff\n", 0644);
    snprintf(text, sizeof(text), "secret_file = %s\n", path);
    write_file(conf, text, 0600);
    snprintf(want, sizeof(want), "%s: readable by group or others; chmod 600 it", path);
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == -1 && strcmp(err, want) == 0);
    unlink(path);
    snprintf(path, sizeof(path), "%s/short", dir);
    write_file(path, "00112233445566778899aabbccddeef\n", 0600); /* 31 characters */
    snprintf(text, sizeof(text), "secret_file = %s\n", secret);
    snprintf(text + strlen(text), sizeof(text) - strlen(text), "gateway_secret_file = %s\n", path);
    /* redis_password_file is read before the gateway's: point it at the
     * good secret, so the gateway secret is the one refused */
    snprintf(text + strlen(text), sizeof(text) - strlen(text), "redis_password_file = %s\n",
             secret);
    write_file(conf, text, 0600);
    snprintf(want, sizeof(want), "%s: the secret must be at least 32 characters", path);
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == -1 && strcmp(err, want) == 0);
    unlink(path);
}

/* Decision 0079: no registry by default; with one, its key is loaded and
 * checked at start. */
static void test_registry(void)
{
    struct corral_conf c;
    char err[512] = "", key[300], cmd[600], body[700], want[600];

    write_conf("");
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == 0 && c.registry[0] == '\0' &&
          c.registry_key_pem[0] == '\0' && !strcmp(c.registry_key, "/etc/corral/registry.key") &&
          !strcmp(c.registry_service, "corral-registry") && !strcmp(c.registry_issuer, "corral"));
    snprintf(key, sizeof(key), "%s/registry.key", dir);
    snprintf(cmd, sizeof(cmd),
             "umask 077; openssl ecparam -name prime256v1 -genkey -noout -out %s 2>/dev/null", key);
    CHECK(system(cmd) == 0);
    snprintf(body, sizeof(body),
             "registry = 127.0.0.1:5000\nregistry_key = %s\nregistry_service = reg\n"
             "registry_issuer = me\n",
             key);
    write_conf(body);
    CHECK(corral_conf_load(conf, &c, err, sizeof(err)) == 0 &&
          !strcmp(c.registry, "127.0.0.1:5000") && !strcmp(c.registry_service, "reg") &&
          !strcmp(c.registry_issuer, "me") &&
          !strncmp(c.registry_key_pem, "-----BEGIN EC PRIVATE KEY-----\n", 31) &&
          strstr(c.registry_key_pem, "-----END EC PRIVATE KEY-----"));
    CHECK(accepted("registry = [::1]:5000\nregistry_key = /nonexistent\nregistry =\n"));
    CHECK(refused("registry = 127.0.0.1\n", "%s:4: registry: expected HOST:PORT"));
    CHECK(refused("registry = a:1,b:2\n", "%s:4: registry: expected HOST:PORT"));
    CHECK(refused("registry = a:0\n", "%s:4: registry: expected HOST:PORT"));
    snprintf(body, sizeof(body), "registry = r:5000\nregistry_key = %s\nregistry_issuer =\n", key);
    CHECK(refused(body, "registry_service and registry_issuer must not be empty"));
    snprintf(body, sizeof(body), "registry = r:5000\nregistry_key = %s/absent\n", dir);
    snprintf(want, sizeof(want), "%s/absent: No such file or directory", dir);
    CHECK(refused(body, want));
    /* the server secret is no key: refused naming the file, never its text */
    snprintf(body, sizeof(body), "registry = r:5000\nregistry_key = %s\n", secret);
    snprintf(want, sizeof(want), "%s: not an EC P-256 private key in PEM (registry_key)", secret);
    CHECK(refused(body, want));
    CHECK(chmod(key, 0640) == 0);
    snprintf(body, sizeof(body), "registry = r:5000\nregistry_key = %s\n", key);
    snprintf(want, sizeof(want), "%s: readable by group or others; chmod 600 it", key);
    CHECK(refused(body, want));
    unlink(key);
}

void unit_conf(int *total_passed, int *total_failed)
{
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    snprintf(secret, sizeof(secret), "%s/secret", dir);
    snprintf(conf, sizeof(conf), "%s/corral.conf", dir);
    write_file(secret, "00112233445566778899aabbccddeeff \r\n", 0600);
    test_good();
    test_refusals();
    test_data_addrs();
    test_ceilings();
    test_secrets();
    test_registry();
    unlink(conf);
    unlink(secret);
    rmdir(dir);
    *total_passed += passed;
    *total_failed += failed;
}
