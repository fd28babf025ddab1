/* Unit tests of workerd's pure functions: backoff, the gVisor probe's verdict,
 * sandbox ids, configuration, the network rules, per-sandbox networks, the
 * container bodies. Prints "N passed, N failed". */
#include "agent.h"
#include "check.h"
#include "containers.h"
#include "halt_pidfd.h"
#include "egress_proxy.h"
#include "log.h"
#include "envd/net_env.h"
#include "netguard.h"
#include "sandbox_body.h"
#include "sbnet.h"
#include "snapshots.h"
#include "tar_one.h"
#include "volumes.h"
#include "stderr_capture.h"
#include "probe.h"
#include "worker.h"
#include "worker_conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

CHECK_COUNTERS;

static void test_backoff(void)
{
    struct backoff b;
    long prev_cap = 0;

    backoff_init(&b, 100, 1000);
    for (int i = 0; i < 10; i++) {
        long cap = b.cur_ms, d = backoff_next(&b);
        CHECK(d >= cap / 2 && d <= cap); /* jitter within the current step */
        CHECK(b.cur_ms <= 1000);         /* capped */
        prev_cap = cap;
    }
    CHECK(prev_cap == 1000);
    backoff_reset(&b);
    CHECK(b.cur_ms == 100);
}

static void test_probe(void)
{
    const char *host = "6.1.0-28-amd64";

    CHECK(probe_output_is_gvisor("Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016\n"
                                 "[   0.000000] Starting gVisor...\n",
                                 host));
    CHECK(!probe_output_is_gvisor("Linux version 6.1.0-28-amd64 (debian-kernel@...) gVisor", host));
    CHECK(!probe_output_is_gvisor("Linux version 4.4.0 no guest marker", host));
    CHECK(!probe_output_is_gvisor("", host) && !probe_output_is_gvisor(NULL, host));
}

/* Only corral-snap:snap-<20 hex> is ever committed, used or removed. */
static void test_snapshot_names(void)
{
    json_t *sb = json_pack("{s:[{s:s, s:s}]}", "volumes", "volume",
                           "corral-vol-0123456789abcdef0123", "path", "/data");
    json_t *m = volumes_mounts(sb);

    CHECK(snapshot_image_name_ok("corral-snap:snap-0123456789abcdef0123"));
    CHECK(!snapshot_image_name_ok("corral/base"));
    CHECK(!snapshot_image_name_ok("corral-snap:snap-0123456789abcdef012"));
    CHECK(!snapshot_image_name_ok("corral-snap:snap-0123456789abcdef0123x"));
    CHECK(!snapshot_image_name_ok("corral-snap:latest"));
    CHECK(json_array_size(m) == 1 &&
          !strcmp(json_string_value(json_object_get(json_array_get(m, 0), "Type")), "volume") &&
          !strcmp(json_string_value(json_object_get(json_array_get(m, 0), "Target")), "/data"));
    json_decref(m);
    json_decref(sb);
    m = volumes_mounts(NULL);
    CHECK(json_is_array(m) && json_array_size(m) == 0);
    json_decref(m);
}

static void test_ids(void)
{
    CHECK(containers_id_ok("0123456789abcdef0123"));
    CHECK(!containers_id_ok("") && !containers_id_ok("../x") && !containers_id_ok("a b"));
}

static void test_conf(void)
{
    struct worker_conf c;
    char err[256];

    wconf_defaults(&c);
    CHECK(wconf_set(&c, "slots", "8", err, sizeof(err)) == 0 && c.slots == 8);
    CHECK(wconf_set(&c, "slots", "zero", err, sizeof(err)) != 0 && err[0] != '\0');
    CHECK(wconf_set(&c, "no_such_key", "1", err, sizeof(err)) != 0);
    /* removal without dockerd's walk: off unless turned on (decision 0086) */
    CHECK(c.fast_remove == 0 && wconf_set(&c, "fast_remove", "1", err, sizeof(err)) == 0 &&
          c.fast_remove == 1);
    CHECK(wconf_set(&c, "fast_remove", "2", err, sizeof(err)) != 0 && strstr(err, "[0, 1]"));
    CHECK(wconf_set(&c, "template.base", "corral/base", err, sizeof(err)) == 0);
    CHECK(wconf_template(&c, "base") != NULL && wconf_template(&c, "other") == NULL);
    /* base served, warm_pool not given: a few warm base sandboxes on runc */
    CHECK(wconf_warm_default(&c, err, sizeof(err)) == 0 && c.n_warm == 1 &&
          !strcmp(c.warm[0].tmpl, "base") && !strcmp(c.warm[0].runtime, "runc") &&
          c.warm[0].size == 2);
    wconf_free(&c);
    wconf_defaults(&c); /* "warm_pool =" given: none */
    CHECK(wconf_set(&c, "template.base", "corral/base", err, sizeof(err)) == 0);
    CHECK(wconf_set(&c, "warm_pool", "", err, sizeof(err)) == 0);
    CHECK(wconf_warm_default(&c, err, sizeof(err)) == 0 && c.n_warm == 0);
    wconf_free(&c);
    wconf_defaults(&c); /* no base: nothing to keep warm */
    CHECK(wconf_set(&c, "template.py", "corral/base", err, sizeof(err)) == 0);
    CHECK(wconf_warm_default(&c, err, sizeof(err)) == 0 && c.n_warm == 0);
    wconf_free(&c);
}

/* The data plane's walls (decision 0062): by default only envd's port and
 * private sandboxes; expose_ports adds exactly the ports listed, and a bad
 * list is refused whole, naming the word at fault. */
static void test_agent_walls(struct worker_conf *c)
{
    char err[256], many[1024] = "";

    CHECK(c->agent.n_expose == 0 && c->agent.public_traffic == 0);
    CHECK(agent_port_exposed(&c->agent, 49983) && !agent_port_exposed(&c->agent, 3000));
    CHECK(!agent_port_exposed(&c->agent, 0) && !agent_port_exposed(&c->agent, 22));
    CHECK(wconf_set(c, "expose_ports", "3000 8080,9000", err, sizeof(err)) == 0);
    CHECK(c->agent.n_expose == 3 && agent_port_exposed(&c->agent, 8080));
    CHECK(agent_port_exposed(&c->agent, 3000) && agent_port_exposed(&c->agent, 9000));
    CHECK(!agent_port_exposed(&c->agent, 3001) && !agent_port_exposed(&c->agent, 80));
    CHECK(wconf_set(c, "expose_ports", "3000 http", err, sizeof(err)) != 0 &&
          strstr(err, "\"http\""));
    CHECK(c->agent.n_expose == 3 && agent_port_exposed(&c->agent, 9000)); /* unchanged */
    CHECK(wconf_set(c, "expose_ports", "0", err, sizeof(err)) != 0 && strstr(err, "[1, 65535]"));
    CHECK(wconf_set(c, "expose_ports", "65536", err, sizeof(err)) != 0);
    CHECK(wconf_set(c, "expose_ports", "-1", err, sizeof(err)) != 0);
    CHECK(wconf_set(c, "expose_ports", "3000x", err, sizeof(err)) != 0);
    for (int i = 0; i < WCONF_MAX_EXPOSE + 1; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%d ", 1000 + i);
    CHECK(wconf_set(c, "expose_ports", many, err, sizeof(err)) != 0 && strstr(err, "at most"));
    /* Given again, the list is replaced: an empty value exposes nothing. */
    CHECK(wconf_set(c, "expose_ports", "", err, sizeof(err)) == 0 && c->agent.n_expose == 0);
    CHECK(!agent_port_exposed(&c->agent, 3000) && agent_port_exposed(&c->agent, 49983));
    CHECK(wconf_set(c, "allow_public_traffic", "yes", err, sizeof(err)) == 0 &&
          c->agent.public_traffic);
    CHECK(wconf_set(c, "allow_public_traffic", "no", err, sizeof(err)) == 0 &&
          !c->agent.public_traffic);
    CHECK(wconf_set(c, "allow_public_traffic", "true", err, sizeof(err)) != 0 &&
          strstr(err, "yes or no"));
}

/* Agent mode's keys (decision 0054): checked values, and the defaults a
 * person's machine gets (its one template base, the directory it starts in,
 * the gate's files under $HOME). */
static void test_agent_conf(void)
{
    struct worker_conf c;
    char err[256], home[] = "/tmp/unit-agent-XXXXXX", cwd[4096], gate[4200];

    wconf_defaults(&c);
    CHECK(wconf_set(&c, "mode", "agent", err, sizeof(err)) == 0 && c.agent.on);
    CHECK(wconf_set(&c, "mode", "vm", err, sizeof(err)) != 0 && strstr(err, "docker or agent"));
    CHECK(wconf_set(&c, "permission_mode", "strict", err, sizeof(err)) == 0);
    CHECK(wconf_set(&c, "permission_mode", "ask", err, sizeof(err)) != 0);
    CHECK(wconf_set(&c, "os_sandbox", "bwrap", err, sizeof(err)) == 0);
    CHECK(wconf_set(&c, "os_sandbox", "firejail", err, sizeof(err)) != 0);
    CHECK(wconf_set(&c, "ask_timeout", "0", err, sizeof(err)) != 0);
    CHECK(wconf_set(&c, "ask_timeout", "45", err, sizeof(err)) == 0 && c.agent.ask_timeout_s == 45);
    CHECK(mkdtemp(home) != NULL && getcwd(cwd, sizeof(cwd)) != NULL);
    setenv("HOME", home, 1);
    CHECK(agent_conf_finish(&c, err, sizeof(err)) == 0);
    snprintf(gate, sizeof(gate), "%s/.corral-gate", home);
    CHECK(strcmp(c.agent.gate_dir, gate) == 0 && access(gate, W_OK) == 0);
    CHECK(strcmp(c.agent.work_tree, cwd) == 0);
    CHECK(c.n_templates == 1 && wconf_template(&c, "base") != NULL);
    CHECK(wconf_set(&c, "work_tree", "/no/such/tree", err, sizeof(err)) == 0);
    CHECK(agent_conf_finish(&c, err, sizeof(err)) != 0 && strstr(err, "work_tree"));
    CHECK(!agent_pid_is_envd(getpid()) && !agent_pid_is_envd(999999999));
    test_agent_walls(&c);
    rmdir(gate);
    rmdir(home);
    wconf_free(&c);
}

/* Issue 9 point 8: a 2-core, 24 GB dev machine holds dozens of idle default
 * sandboxes (1 cpu, 512 MB): cpu is overcommitted, memory is the bound. */
static void test_conf_capacity(void)
{
    struct worker_conf c;
    char err[128];

    wconf_defaults(&c);
    c.memory_mb = 24105;
    wconf_capacity(&c, 2);
    CHECK(c.cpu_cores == 64 && c.slots == 47); /* 47 x 512 MB fit, 64 cpu hints */
    wconf_defaults(&c);
    c.memory_mb = 8192;
    CHECK(wconf_set(&c, "cpu_overcommit", "4", err, sizeof(err)) == 0);
    wconf_capacity(&c, 2);
    CHECK(c.cpu_cores == 8 && c.slots == 16);
    /* Set explicitly: kept as given, in either order. */
    wconf_defaults(&c);
    CHECK(wconf_set(&c, "cpu_cores", "3", err, sizeof(err)) == 0);
    CHECK(wconf_set(&c, "slots", "5", err, sizeof(err)) == 0);
    wconf_capacity(&c, 8);
    CHECK(c.cpu_cores == 3 && c.slots == 5);
    wconf_defaults(&c);
    c.memory_mb = 100;
    wconf_capacity(&c, 0);
    CHECK(c.slots == 1 && c.cpu_cores == WCONF_DEFAULT_OVERCOMMIT);
    CHECK(wconf_set(&c, "cpu_overcommit", "0", err, sizeof(err)) != 0 && strstr(err, "(0, 1000]"));
    CHECK(wconf_set(&c, "cpu_overcommit", "nan", err, sizeof(err)) != 0);
    CHECK(wconf_set(&c, "cpu_overcommit", "1001", err, sizeof(err)) != 0);
}

static void test_resolvers(void)
{
    struct netguard_dns d;
    char err[128];

    memset(&d, 0, sizeof(d));
    netguard_parse_resolv("# comment\nnameserver 10.255.255.53\nnameserver 127.0.0.53\n"
                          "search x\nnameserver ::1\nnameserver 2001:db8::53\nnameserver bogus",
                          &d);
    CHECK(d.n4 == 1 && strcmp(d.v4[0], "10.255.255.53") == 0); /* loopback stub skipped */
    CHECK(d.n6 == 1 && strcmp(d.v6[0], "2001:db8::53") == 0);
    memset(&d, 0, sizeof(d));
    CHECK(netguard_parse_list("1.1.1.1, 9.9.9.9", &d, err, sizeof(err)) == 0 && d.n4 == 2);
    CHECK(netguard_parse_list("1.1.1.1,evil.com", &d, err, sizeof(err)) != 0 &&
          strstr(err, "evil.com") != NULL);
}

static void test_ruleset(void)
{
    struct netguard_dns d = {.v4 = {"10.255.255.53"}, .n4 = 1};
    struct netguard_lan lan = {0}, none = {0};
    const unsigned char a[4] = {192, 0, 2, 77};
    char *r, *empty;

    netguard_lan_add(&lan, AF_INET, a, 24);
    netguard_lan_add(&lan, AF_INET, a, 24); /* a second address of the same network */
    CHECK(lan.n4 == 1 && strcmp(lan.v4[0], "192.0.2.0/24") == 0);
    r = netguard_ruleset(&d, &lan);

    CHECK(r != NULL);
    if (!r)
        return;
    CHECK(strstr(r, "delete table inet corral") != NULL); /* replaced atomically */
    CHECK(strstr(r, "10.0.0.0/8") && strstr(r, "100.64.0.0/10") && strstr(r, "169.254.0.0/16") &&
          strstr(r, "172.16.0.0/12") && strstr(r, "192.168.0.0/16") && strstr(r, "127.0.0.0/8"));
    CHECK(strstr(r, "fc00::/7") && strstr(r, "fe80::/10") && strstr(r, "::/127"));
    CHECK(strstr(r, "elements = { 10.255.255.53 }") != NULL);
    CHECK(strstr(r, "hook input") && strstr(r, "iifname \"crl*\" drop") &&
          strstr(r, "iifname \"cri*\" drop"));
    CHECK(strstr(r, "oifname \"crl*\" ct state established,related accept") <
          strstr(r, "oifname \"crl*\" drop")); /* nothing new into a sandbox */
    CHECK(strstr(r, "iifname \"crl*\" oifname != \"crl*\" masquerade") != NULL);
    /* DNS accepted before private ranges are dropped, or it would never match. */
    CHECK(strstr(r, "@dns4") < strstr(r, "ip daddr @blocked4 drop"));
    /* The host's own LAN, whatever its range (192.0.2.0/24 is public space). */
    CHECK(strstr(r, "set lan4 { type ipv4_addr; flags interval; auto-merge; elements = { "
                    "192.0.2.0/24 }") != NULL);
    CHECK(strstr(r, "iifname \"crl*\" ip daddr @lan4 drop") != NULL);
    /* Nothing routed between two sandbox bridges, before any accept. */
    CHECK(strstr(r, "iifname { \"crl*\", \"cri*\" } oifname { \"crl*\", \"cri*\" } fib daddr . "
                    "iif oif missing drop") != NULL);
    CHECK(strstr(r, "oif missing drop") < strstr(r, "oif exists accept"));
    CHECK(strstr(r, "iifname \"cri*\" oifname \"cri*\" fib daddr . iif oif exists accept") != NULL);
    empty = netguard_ruleset(&(struct netguard_dns){0}, &none);
    CHECK(empty && strstr(empty, "set dns4 { type ipv4_addr; }") != NULL);
    free(r);
    free(empty);
}

static void test_sbnet(void)
{
    char a[SBNET_NAME_MAX], b[SBNET_IF_MAX], c[SBNET_IF_MAX];

    sbnet_name(a, sizeof(a), "sb1", "w1", SBNET_INTERNAL);
    CHECK(strcmp(a, "corral-sb1-w1-int") == 0);
    sbnet_bridge(b, sizeof(b), a, SBNET_INTERNAL);
    CHECK(strlen(b) == 15 && strncmp(b, "cri", 3) == 0);
    sbnet_name(a, sizeof(a), "sb1", "w1", SBNET_EGRESS);
    CHECK(strcmp(a, "corral-egress") == 0); /* the host's, whatever the sandbox */
    sbnet_bridge(c, sizeof(c), a, SBNET_EGRESS);
    CHECK(strncmp(c, "crl", 3) == 0 && strcmp(b + 3, c + 3) != 0);
}

static json_t *sandbox(const char *extra)
{
    json_t *sb = json_loads("{\"id\":\"sb1\",\"workspace\":\"ws\",\"tier\":\"CONTAINER\","
                            "\"env\":{\"A\":\"b\"},\"envd_access_token\":\"tok\"}",
                            0, NULL);
    json_t *more = extra ? json_loads(extra, 0, NULL) : NULL;

    if (more)
        json_object_update(sb, more);
    json_decref(more);
    return sb;
}

static int env_has(json_t *body, const char *kv)
{
    size_t i;
    json_t *v;

    json_array_foreach(json_object_get(body, "Env"), i,
                       v) if (strcmp(json_string_value(v), kv) == 0) return 1;
    return 0;
}

static void test_sandbox_body(void)
{
    struct worker_conf c;
    struct wtemplate t = {"base", "corral/base"};
    struct sandbox_net open = {"net-open", 0, 0}, pol = {"net-int", 1, 1};
    json_t *sb = sandbox("{\"pids_limit\":200,\"disk_mb\":512}"), *b1, *b2, *hc;
    char err[128];

    wconf_defaults(&c);
    b1 = sandbox_body(&c, &t, "w1", sb, &open);
    hc = json_object_get(b1, "HostConfig");
    CHECK(strcmp(json_string_value(json_object_get(hc, "NetworkMode")), "net-open") == 0);
    CHECK(json_integer_value(json_object_get(hc, "PidsLimit")) == 200);
    CHECK(json_object_get(hc, "StorageOpt") == NULL); /* no disk quota on this host */
    CHECK(json_array_size(json_object_get(hc, "CapDrop")) == 5 &&
          strcmp(json_string_value(json_array_get(json_object_get(hc, "CapDrop"), 0)), "NET_RAW") ==
              0);
    CHECK(env_has(b1, "A=b") && env_has(b1, ENVD_TOKEN_ENV "=tok") && !env_has(b1, "HTTP_PROXY="));
    CHECK(
        json_object_get(json_object_get(json_object_get(b1, "NetworkingConfig"), "EndpointsConfig"),
                        "net-open") != NULL);
    b2 = sandbox_body(&c, &t, "w1", sb, &pol);
    hc = json_object_get(b2, "HostConfig");
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(hc, "StorageOpt"), "size")),
                 "512M") == 0);
    CHECK(env_has(b2, "HTTPS_PROXY=http://" EGRESS_ALIAS ":" EGRESS_PORT_STR) &&
          env_has(b2, "NO_PROXY=localhost,127.0.0.1,::1"));
    /* envd's default (expiry optional), and the file of environment changes
     * it applies at start (decision 0074). */
    CHECK(json_array_size(json_object_get(b1, "Cmd")) == 4 &&
          strcmp(json_string_value(json_array_get(json_object_get(b1, "Cmd"), 2)), "-net-env") ==
              0 &&
          strcmp(json_string_value(json_array_get(json_object_get(b1, "Cmd"), 3)),
                 ENVD_NET_ENV_DIR "/" ENVD_NET_ENV_FILE) == 0);
    json_decref(b1);
    json_decref(b2);
    CHECK(wconf_set(&c, "envd_signature_expiration", "sometimes", err, sizeof(err)) != 0 &&
          strstr(err, "optional or required") != NULL);
    CHECK(wconf_set(&c, "envd_signature_expiration", "required", err, sizeof(err)) == 0);
    b1 = sandbox_body(&c, &t, "w1", sb, &open);
    CHECK(json_array_size(json_object_get(b1, "Cmd")) == 6 &&
          strcmp(json_string_value(json_array_get(json_object_get(b1, "Cmd"), 4)),
                 "-signature-expiration") == 0 &&
          strcmp(json_string_value(json_array_get(json_object_get(b1, "Cmd"), 5)), "required") ==
              0);
    json_decref(b1);
    json_decref(sb);
}

/* The proxy variables as envd's -net-env file takes them, and the one-file
 * tar that puts the file into a stopped container (decision 0074). */
static void test_net_env_file(void)
{
    json_t *on = json_array(), *off = json_array();
    char *tar = NULL, sum[8];
    size_t len = 0;
    unsigned total = 0;

    sandbox_proxy_env(on, 1);
    sandbox_proxy_env(off, 0);
    /* The proxy's six, then its CA's three (decision 0091). */
    CHECK(json_array_size(on) == 9 && json_array_size(off) == 9);
    CHECK(strcmp(json_string_value(json_array_get(on, 6)),
                 "NODE_EXTRA_CA_CERTS=" SANDBOX_EGRESS_CA) == 0);
    CHECK(strcmp(json_string_value(json_array_get(on, 0)),
                 "HTTP_PROXY=http://" EGRESS_ALIAS ":" EGRESS_PORT_STR) == 0);
    CHECK(strcmp(json_string_value(json_array_get(off, 0)), "HTTP_PROXY") == 0 &&
          strcmp(json_string_value(json_array_get(off, 5)), "no_proxy") == 0);
    /* envd applies only the names it knows (NET_ENV_NAMES): all of these. */
    for (size_t i = 0; i < json_array_size(off); i++) {
        static const char *const names[] = NET_ENV_NAMES;
        const char *name = json_string_value(json_array_get(off, i));
        int known = 0;
        for (int j = 0; names[j]; j++)
            known |= strcmp(name, names[j]) == 0;
        CHECK(known);
    }
    json_decref(on);
    json_decref(off);

    CHECK(tar_one("net.env", "A=1\n", 4, &tar, &len) == 0);
    CHECK(len == 4 * TAR_BLOCK && strcmp(tar, "net.env") == 0);
    CHECK(strcmp(tar + 124, "00000000004") == 0 && tar[156] == '0' &&
          !memcmp(tar + 257, "ustar", 6));
    CHECK(memcmp(tar + TAR_BLOCK, "A=1\n", 4) == 0 && tar[TAR_BLOCK + 4] == '\0');
    memcpy(sum, tar + 148, 8);
    memset(tar + 148, ' ', 8);
    for (int i = 0; i < TAR_BLOCK; i++)
        total += (unsigned char)tar[i];
    CHECK(strtoul(sum, NULL, 8) == total);
    free(tar);
    CHECK(tar_one("a/b", "", 0, &tar, &len) == -1 && tar_one("", "", 0, &tar, &len) == -1);
    CHECK(tar_one("empty", "", 0, &tar, &len) == 0 && len == 3 * TAR_BLOCK);
    free(tar);
}

static void test_proxy_body(void)
{
    struct worker_conf c;
    json_t *pol = json_loads("{\"allow\":[\"a.test\"],\"deny\":[\"0.0.0.0/0\"]}", 0, NULL);
    json_t *b, *hc;
    char err[64];

    wconf_defaults(&c);
    CHECK(wconf_set(&c, "egress_hosts", "a.test:198.51.100.10,b.test:198.51.100.11", err,
                    sizeof(err)) == 0);
    b = egress_proxy_body(&c, "w1", "sb1");
    hc = json_object_get(b, "HostConfig");
    CHECK(strcmp(json_string_value(json_object_get(b, "User")), "65534:65534") == 0);
    CHECK(strcmp(json_string_value(json_array_get(json_object_get(hc, "CapDrop"), 0)), "ALL") == 0);
    CHECK(json_is_true(json_object_get(hc, "ReadonlyRootfs")));
    CHECK(strcmp(json_string_value(json_object_get(hc, "NetworkMode")), "corral-sb1-w1-int") == 0);
    CHECK(json_array_size(json_object_get(hc, "ExtraHosts")) == 2);
    /* The policy (secrets in it) never on the command line: in its directory. */
    CHECK(json_array_size(json_object_get(b, "Cmd")) == 4 &&
          strcmp(json_string_value(json_array_get(json_object_get(b, "Cmd"), 3)),
                 "/run/corral-egress/config") == 0);
    CHECK(strcmp(json_string_value(json_array_get(json_object_get(hc, "Binds"), 1)),
                 "/var/lib/corral-workerd/egress/sb1:/run/corral-egress:ro") == 0);
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(b, "Labels"), "corral.role")),
                 "egress") == 0);
    json_decref(b);
    /* A ready proxy of the pool: on its own internal network, no sandbox yet, its config dir
     * mounted. */
    b = egress_pool_body(&c, "w1", "/var/lib/x/egress/p-1", "corral-p-1-w1-int");
    hc = json_object_get(b, "HostConfig");
    CHECK(strcmp(json_string_value(json_object_get(hc, "NetworkMode")), "corral-p-1-w1-int") == 0);
    CHECK(strcmp(json_string_value(json_array_get(
                     json_object_get(
                         json_object_get(json_object_get(json_object_get(b, "NetworkingConfig"),
                                                         "EndpointsConfig"),
                                         "corral-p-1-w1-int"),
                         "Aliases"),
                     0)),
                 "corral-egress") == 0);
    CHECK(!json_object_get(json_object_get(b, "Labels"), "corral.sandbox"));
    CHECK(strcmp(json_string_value(json_array_get(json_object_get(b, "Cmd"), 2)), "-config-file") ==
          0);
    CHECK(strcmp(json_string_value(json_array_get(json_object_get(hc, "Binds"), 1)),
                 "/var/lib/x/egress/p-1:/run/corral-egress:ro") == 0);
    CHECK(strcmp(json_string_value(json_object_get(b, "User")), "65534:65534") == 0);
    json_decref(b);
    json_decref(pol);
}

static void test_apply_order(void)
{
    json_t *cmds = json_loads("[{\"id\":\"1\",\"type\":\"kill\",\"sandbox_id\":\"a\"},"
                              "{\"id\":\"2\",\"type\":\"create\",\"sandbox\":{\"id\":\"b\"}},"
                              "{\"id\":\"3\",\"type\":\"create\",\"sandbox\":{\"id\":\"a\"}},"
                              "{\"id\":\"4\",\"type\":\"kill\",\"sandbox_id\":\"c\"},"
                              "{\"id\":\"5\",\"type\":\"create\",\"sandbox\":{\"id\":\"d\"}}]",
                              0, NULL);
    commands_arrived(cmds);
    /* Kills first (each frees the slot a create may have been placed in), but
     * create a stays behind kill a. */
    const char *want[] = {"1", "4", "2", "5", "3"};

    apply_order(cmds);
    CHECK(json_array_size(cmds) == 5);
    for (size_t i = 0; i < 5; i++)
        CHECK(strcmp(json_string_value(json_object_get(json_array_get(cmds, i), "id")), want[i]) ==
              0);
    json_decref(cmds);
    /* Pauses and resumes ahead of every create and kill, except behind another
     * command of their own sandbox: a pause queued behind 20 kills waited for
     * all of them (12 s in make bench). */
    cmds = json_loads("[{\"id\":\"1\",\"type\":\"kill\",\"sandbox_id\":\"a\"},"
                      "{\"id\":\"2\",\"type\":\"create\",\"sandbox\":{\"id\":\"b\"}},"
                      "{\"id\":\"3\",\"type\":\"pause\",\"sandbox_id\":\"c\"},"
                      "{\"id\":\"4\",\"type\":\"pause\",\"sandbox_id\":\"a\"},"
                      "{\"id\":\"5\",\"type\":\"resume\",\"sandbox_id\":\"c\"},"
                      "{\"id\":\"6\",\"type\":\"snapshot\",\"sandbox_id\":\"d\"},"
                      "{\"id\":\"7\",\"type\":\"resume\",\"sandbox_id\":\"d\"}]",
                      0, NULL);
    commands_arrived(cmds);
    const char *want2[] = {"3", "5", "1", "2", "4", "6", "7"};

    apply_order(cmds);
    CHECK(json_array_size(cmds) == 7);
    for (size_t i = 0; i < 7; i++)
        CHECK(strcmp(json_string_value(json_object_get(json_array_get(cmds, i), "id")), want2[i]) ==
              0);
    CHECK(!apply_batchable(json_array_get(cmds, 0)) && apply_batchable(json_array_get(cmds, 2)) &&
          apply_batchable(json_array_get(cmds, 3)) && !apply_batchable(NULL));
    json_decref(cmds);
    /* A pause or resume that stops or boots a container, or remakes a proxy,
     * is seconds of work: applied on a thread as a create (decision 0074). */
    cmds = json_loads("[{\"type\":\"pause\",\"sandbox_id\":\"a\",\"args\":{\"memory\":false}},"
                      "{\"type\":\"resume\",\"sandbox_id\":\"a\",\"args\":{\"memory\":false}},"
                      "{\"type\":\"resume\",\"sandbox_id\":\"b\",\"args\":{\"egress\":null}},"
                      "{\"type\":\"pause\",\"sandbox_id\":\"c\",\"args\":{\"memory\":true}},"
                      "{\"type\":\"kill\",\"sandbox_id\":\"d\",\"args\":{\"memory\":false}}]",
                      0, NULL);
    commands_arrived(cmds);
    for (size_t i = 0; i < 3; i++)
        CHECK(apply_pause_slow(json_array_get(cmds, i)) &&
              apply_batchable(json_array_get(cmds, i)));
    CHECK(!apply_pause_slow(json_array_get(cmds, 3)) && !apply_batchable(json_array_get(cmds, 3)));
    CHECK(!apply_pause_slow(json_array_get(cmds, 4)));
    json_decref(cmds);
    /* A kill never passes its own sandbox's create: x would run on, orphaned. */
    cmds = json_loads("[{\"id\":\"1\",\"type\":\"create\",\"sandbox\":{\"id\":\"x\"}},"
                      "{\"id\":\"2\",\"type\":\"kill\",\"sandbox_id\":\"x\"},"
                      "{\"id\":\"3\",\"type\":\"kill\",\"sandbox_id\":\"y\"}]",
                      0, NULL);
    commands_arrived(cmds);
    const char *want3[] = {"3", "1", "2"};

    apply_order(cmds);
    for (size_t i = 0; i < 3; i++)
        CHECK(strcmp(json_string_value(json_object_get(json_array_get(cmds, i), "id")), want3[i]) ==
              0);
    json_decref(cmds);
}

/* Docker's ?filters= built as JSON, then URL-encoded: a label value with a
 * quote in it stays a string, never breaks out into the JSON around it. */
static void test_docker_filters(void)
{
    struct docker d = {0};
    char *enc = docker_filters(&d, json_pack("{s:[s+]}", "label", "corral.worker=", "ab"));

    CHECK(enc && strcmp(enc, "%7B%22label%22%3A%5B%22corral.worker%3Dab%22%5D%7D") == 0);
    curl_free(enc);
    enc = docker_filters(&d, json_pack("{s:[s]}", "label", "x\",\"y"));
    CHECK(enc && strcmp(enc, "%7B%22label%22%3A%5B%22x%5C%22%2C%5C%22y%22%5D%7D") == 0);
    curl_free(enc);
    CHECK(docker_filters(&d, NULL) == NULL);
}

/* A command brought again while it waits or was applied is not taken twice. */
static void test_backlog_merge(void)
{
    json_t *backlog = json_loads("[{\"id\":\"1-0\",\"type\":\"create\"}]", 0, NULL),
           *acks = json_loads("[\"2-0\"]", 0, NULL),
           *again = json_loads("[{\"id\":\"1-0\",\"type\":\"create\"},"
                               "{\"id\":\"2-0\",\"type\":\"create\"},"
                               "{\"id\":\"3-0\",\"type\":\"kill\"},"
                               "{\"id\":\"3-0\",\"type\":\"kill\"}]",
                               0, NULL);

    backlog_merge(backlog, acks, again);
    CHECK(json_array_size(backlog) == 2);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(backlog, 1), "id")), "3-0") == 0);
    /* What a keepalive brings during a batch: the batch's own create (1-0),
     * one acknowledged (2-0) and one already arrived (4-0) are dropped, or
     * the create would stand before its sandbox's kill (5-0) and hold it. */
    json_t *arrived = json_loads("[{\"id\":\"4-0\",\"type\":\"create\"}]", 0, NULL),
           *keep = json_loads("[{\"id\":\"1-0\",\"type\":\"create\"},"
                              "{\"id\":\"2-0\",\"type\":\"create\"},"
                              "{\"id\":\"4-0\",\"type\":\"create\"},"
                              "{\"id\":\"5-0\",\"type\":\"kill\"}]",
                              0, NULL);
    arrived_merge(arrived, backlog, acks, keep);
    CHECK(json_array_size(arrived) == 2);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(arrived, 1), "id")), "5-0") == 0);
    json_decref(arrived);
    json_decref(keep);
    json_decref(backlog);
    json_decref(acks);
    json_decref(again);
}

/* Only the init of a pid namespace below ours is killed through the kernel. */
static void test_halt_is_ns_init(void)
{
    CHECK(halt_is_ns_init("NSpid:\t4242\t1\n"));
    CHECK(halt_is_ns_init("NSpid:\t4242\t17\t1\n")); /* nested */
    CHECK(!halt_is_ns_init("NSpid:\t4242\t7\n"));    /* a process inside, not its init */
    CHECK(!halt_is_ns_init("NSpid:\t1\n"));          /* our own init */
    CHECK(!halt_is_ns_init("NSpid:\n"));
    CHECK(!halt_is_ns_init("Pid:\t4242\n"));
    CHECK(!halt_is_ns_init(NULL));
    CHECK(halt_pidfd(1, "x", 10) == -1); /* never our init, never a short id */
    CHECK(halt_pidfd((long)getpid(),
                     "0123456789012345678901234567890123456789012345678901234567890123", 10) == -1);
}

static void test_slot_backstop(void)
{
    struct worker_conf c;
    struct worker w;
    struct ctr_state st = {.sbid = "aa", .state = SB_RUNNING, .tier = "CONTAINER"};

    wconf_defaults(&c);
    c.slots = 1;
    memset(&w, 0, sizeof(w));
    w.conf = &c;
    w.backlog = json_array();
    sbtable_init(&w.table);
    sbtable_record(&w.table, &st, 0);
    CHECK(apply_slot_free(&w, "aa"));  /* a create delivered again */
    CHECK(!apply_slot_free(&w, "bb")); /* full */
    json_array_append_new(w.backlog, json_pack("{s:s, s:s}", "type", "kill", "sandbox_id", "aa"));
    CHECK(!apply_slot_free(&w, "bb")); /* a kill still to come frees nothing yet */
    sbtable_del(&w.table, "aa");
    atomic_store(&w.killing, 1);
    CHECK(!apply_slot_free(&w, "bb")); /* nor one under way: its container holds the slot */
    atomic_store(&w.killing, 0);
    CHECK(apply_slot_free(&w, "bb")); /* its container is gone */
    json_decref(w.backlog);
    sbtable_free(&w.table);
    wconf_free(&c);
}

/* workerd's lines about a sandbox carry its id and tier as fields, and the
 * worker id once enrolled; the id is no longer spelled in the message. A
 * create refused by the slots backstop logs without dockerd. */
struct refused_create {
    struct worker *w;
    json_t *sb;
    int rc;
};

static void run_refused_create(void *arg)
{
    struct refused_create *r = arg;

    r->rc = apply_create(r->w, NULL, r->sb);
    log_info("after the create");
}

static int field_is(json_t *o, const char *name, const char *want)
{
    const char *got = json_string_value(json_object_get(o, name));
    return want ? got && strcmp(got, want) == 0 : got == NULL;
}

static void test_sandbox_log_context(void)
{
    struct ctr_state st = {.sbid = "aa", .state = SB_RUNNING, .tier = "CONTAINER"};
    struct worker_conf c;
    struct worker w;
    struct refused_create r = {.w = &w};
    char *text, *second;
    json_t *line = NULL, *after = NULL;

    wconf_defaults(&c);
    c.slots = 1;
    memset(&w, 0, sizeof(w));
    w.conf = &c;
    w.backlog = json_array();
    sbtable_init(&w.table);
    sbtable_record(&w.table, &st, 0);
    r.sb = json_pack("{s:s, s:s, s:s}", "id", "bb", "runtime", "runsc", "tier", "GVISOR");
    log_ctx_set_process(LOG_WORKER, "0a1b2c3d4e5f6071");
    text = stderr_capture(run_refused_create, &r);
    second = text ? strchr(text, '\n') : NULL;
    if (second) {
        *second++ = '\0';
        line = json_loads(text, 0, NULL);
        after = json_loads(second, 0, NULL);
    }
    CHECK(r.rc == 0 && line && after);
    CHECK(field_is(line, "sandbox", "bb") && field_is(line, "tier", "GVISOR"));
    CHECK(field_is(line, "worker", "0a1b2c3d4e5f6071") && field_is(line, "level", "info"));
    CHECK(field_is(line, "msg", "create (runsc) -> failed: no free slot (1 in use)"));
    /* The sandbox was this line's only: the next carries the worker alone. */
    CHECK(field_is(after, "sandbox", NULL) && field_is(after, "tier", NULL));
    CHECK(field_is(after, "worker", "0a1b2c3d4e5f6071"));
    log_ctx_set_process(LOG_WORKER, NULL);
    json_decref(line);
    json_decref(after);
    free(text);
    json_decref(r.sb);
    json_decref(w.backlog);
    sbtable_free(&w.table);
    wconf_free(&c);
}

void unit_dataport(int *total_passed, int *total_failed);
void unit_dataport_frame(int *total_passed, int *total_failed);
void unit_telemetry(int *total_passed, int *total_failed);
void unit_volume(int *total_passed, int *total_failed);
void unit_commands(int *total_passed, int *total_failed);
void unit_build(int *total_passed, int *total_failed);
void unit_warm(int *total_passed, int *total_failed);

int main(void)
{
    test_slot_backstop();
    test_sandbox_log_context();
    test_apply_order();
    test_backlog_merge();
    test_halt_is_ns_init();
    test_docker_filters();
    test_resolvers();
    test_ruleset();
    test_sbnet();
    test_sandbox_body();
    test_net_env_file();
    test_proxy_body();
    test_backoff();
    test_probe();
    test_ids();
    test_snapshot_names();
    test_conf();
    test_agent_conf();
    test_conf_capacity();
    unit_dataport(&passed, &failed);
    unit_dataport_frame(&passed, &failed);
    unit_telemetry(&passed, &failed);
    unit_volume(&passed, &failed);
    unit_commands(&passed, &failed);
    unit_build(&passed, &failed);
    unit_warm(&passed, &failed);
    return CHECK_SUMMARY();
}
