/* Unit tests of common/data_addr.c: which data_addr a worker may register and
 * the gateway may connect to (decisions 32 and 61). */
#include "check.h"
#include "data_addr.h"

#include <string.h>

void unit_data_addr(int *total_passed, int *total_failed);

static int passed, failed;

static int allowed(const struct data_addr_allow *a, const char *addr)
{
    char why[192];

    return data_addr_check(a, addr, strlen(addr), NULL, why, sizeof(why)) == 0;
}

/* 1 when addr is refused with a reason containing want. */
static int refused(const struct data_addr_allow *a, const char *addr, const char *want)
{
    char why[192] = "";

    return data_addr_check(a, addr, strlen(addr), NULL, why, sizeof(why)) != 0 &&
           strstr(why, want) != NULL;
}

/* 1 when the network list is refused with an error naming want. */
static int nets_refused(const char *list, const char *want)
{
    struct data_addr_allow a;
    char err[192] = "";

    data_addr_defaults(&a);
    return data_addr_networks(&a, list, err, sizeof(err)) != 0 && strstr(err, want) != NULL;
}

/* The defaults: workerd's own data port on loopback, and nothing else of the
 * gateway host's loopback (issue 25: Redis, a Docker API, other data ports). */
static void test_defaults(void)
{
    struct data_addr_allow a;
    char canon[DATA_ADDR_CANON], why[192];

    data_addr_defaults(&a);
    CHECK(a.nnets == 0 && a.naddrs == 1);
    CHECK(allowed(&a, "127.0.0.1:7001"));
    /* not NUL-terminated: the module passes an ngx_str_t */
    CHECK(data_addr_check(&a, "127.0.0.1:7001xyz", 14, canon, why, sizeof(why)) == 0);
    CHECK(strcmp(canon, "127.0.0.1:7001") == 0);
    CHECK(refused(&a, "127.0.0.1:6390",
                  "127.0.0.1:6390 is on loopback and not a listed worker data address"));
    CHECK(refused(&a, "127.0.0.1:2375", "on loopback"));
    CHECK(refused(&a, "127.0.0.1:7002", "on loopback"));
    CHECK(refused(&a, "127.0.0.2:7001", "127.0.0.2:7001 is on loopback"));
    CHECK(refused(&a, "127.9.8.7:65535", "on loopback"));
    CHECK(refused(&a, "[::1]:7001", "[::1]:7001 is on loopback"));
    CHECK(refused(&a, "[0:0:0:0:0:0:0:1]:6390", "[::1]:6390 is on loopback"));
    CHECK(refused(&a, "127.0.0.1:80", "on loopback"));
    CHECK(refused(&a, "10.0.0.5:7001", "10.0.0.5 is outside the networks"));
}

/* Exact addresses: the only way to loopback, matched address and port both,
 * canonically. */
static void test_addrs(void)
{
    struct data_addr_allow a;
    char canon[DATA_ADDR_CANON], why[192], err[192];

    data_addr_defaults(&a);
    CHECK(data_addr_addrs(&a, "127.0.0.1:7001, [::1]:7002 10.0.0.9:8000", err, sizeof(err)) == 0);
    CHECK(a.naddrs == 3);
    CHECK(allowed(&a, "127.0.0.1:7001"));
    CHECK(data_addr_check(&a, "[0:0:0:0:0:0:0:1]:7002", 22, canon, why, sizeof(why)) == 0);
    CHECK(strcmp(canon, "[::1]:7002") == 0);
    CHECK(refused(&a, "[::1]:7001", "on loopback"));
    CHECK(refused(&a, "127.0.0.1:7002", "on loopback"));
    CHECK(allowed(&a, "10.0.0.9:8000"));
    CHECK(refused(&a, "10.0.0.9:8001", "outside the networks"));
    /* replaced, not added */
    CHECK(data_addr_addrs(&a, "127.0.0.1:7005", err, sizeof(err)) == 0);
    CHECK(refused(&a, "127.0.0.1:7001", "on loopback") && allowed(&a, "127.0.0.1:7005"));
    /* a range of ports at one address: a tunnel daemon's (decision 0087) */
    CHECK(data_addr_addrs(&a, "127.0.0.1:7100-7163 [::1]:7200-7201", err, sizeof(err)) == 0);
    CHECK(allowed(&a, "127.0.0.1:7100") && allowed(&a, "127.0.0.1:7163"));
    CHECK(allowed(&a, "[::1]:7201") && refused(&a, "[::1]:7202", "on loopback"));
    CHECK(refused(&a, "127.0.0.1:7099", "on loopback") &&
          refused(&a, "127.0.0.1:7164", "on loopback"));
    CHECK(data_addr_addrs(&a, "127.0.0.1:7200-7100", err, sizeof(err)) != 0 &&
          strstr(err, "127.0.0.1:7200-7100: must be"));
    CHECK(data_addr_addrs(&a, "127.0.0.1:7200-", err, sizeof(err)) != 0);
    CHECK(data_addr_addrs(&a, "127.0.0.1:7200-70000", err, sizeof(err)) != 0);
    /* malformed or never allowed: refused at load, named */
    CHECK(data_addr_addrs(&a, "127.0.0.1", err, sizeof(err)) != 0 &&
          strstr(err, "127.0.0.1: must be an IP address and a port"));
    CHECK(data_addr_addrs(&a, "localhost:7001", err, sizeof(err)) != 0 &&
          strstr(err, "localhost:7001: must be"));
    CHECK(data_addr_addrs(&a, "127.0.0.0/8", err, sizeof(err)) != 0 &&
          strstr(err, "127.0.0.0/8: must be"));
    CHECK(data_addr_addrs(&a, "169.254.169.254:80", err, sizeof(err)) != 0 &&
          strstr(err, "169.254.169.254:80: link-local"));
    CHECK(data_addr_addrs(&a, "[::ffff:127.0.0.1]:7001", err, sizeof(err)) != 0 &&
          strstr(err, "IPv4-mapped"));
    CHECK(data_addr_addrs(&a, " ", err, sizeof(err)) != 0 && strstr(err, "lists no address"));
    {
        char many[2048] = "";
        for (int i = 0; i < DATA_ADDR_MAX_ADDRS + 1; i++)
            snprintf(many + strlen(many), sizeof(many) - strlen(many), "127.0.0.1:%d ", 7000 + i);
        CHECK(data_addr_addrs(&a, many, err, sizeof(err)) != 0 && strstr(err, "more than 64"));
    }
}

/* A network never reaches loopback: one overlapping it is refused at load,
 * whatever its ports, and a loopback address is refused at the check even
 * with every network and port allowed. */
static void test_loopback_networks(void)
{
    struct data_addr_allow a;
    char err[192];

    CHECK(nets_refused("127.0.0.0/8", "127.0.0.0/8: overlaps loopback (127.0.0.0/8)"));
    CHECK(nets_refused("127.0.0.1/32", "127.0.0.1/32: overlaps loopback"));
    CHECK(nets_refused("10.0.0.0/8 127.0.0.2", "127.0.0.2: overlaps loopback"));
    CHECK(nets_refused("64.0.0.0/2", "64.0.0.0/2: overlaps loopback (127.0.0.0/8)"));
    CHECK(nets_refused("::1/128", "::1/128: overlaps loopback (::1/128)"));
    CHECK(nets_refused("::/127", "covers unspecified")); /* :: refuses it first */
    CHECK(nets_refused("::1", "overlaps loopback"));
    CHECK(nets_refused("127.0.0.0/8", "list a worker's data port there as an exact address"));
    data_addr_defaults(&a);
    CHECK(data_addr_networks(&a, "1.0.0.0/8 10.0.0.0/8 192.168.0.0/16", err, sizeof(err)) == 0);
    CHECK(data_addr_ports(&a, "1-65535", err, sizeof(err)) == 0);
    a.naddrs = 0;
    /* as if a network covered loopback (a struct edited by hand): still refused */
    CHECK(egress_rule_parse("127.0.0.0/8", &a.nets[a.nnets++]) == 0);
    CHECK(refused(&a, "127.0.0.1:6390", "on loopback"));
    CHECK(allowed(&a, "10.1.2.3:6390"));
}

/* The module's corral_upstream_allow: networks and exact addresses mixed. */
static void test_entries(void)
{
    struct data_addr_allow a;
    char err[192];

    data_addr_defaults(&a);
    CHECK(data_addr_entries(&a, "10.0.0.0/24 127.0.0.1:7001 [::1]:7002 fd12::/64 10.1.0.9", err,
                            sizeof(err)) == 0);
    CHECK(a.nnets == 3 && a.naddrs == 2);
    CHECK(allowed(&a, "10.0.0.7:7001") && allowed(&a, "[fd12::7]:7001"));
    CHECK(allowed(&a, "10.1.0.9:7001") && refused(&a, "10.1.0.9:7002", "port 7002"));
    CHECK(allowed(&a, "127.0.0.1:7001") && allowed(&a, "[::1]:7002"));
    CHECK(refused(&a, "127.0.0.1:7002", "on loopback"));
    /* replaced, both kinds */
    CHECK(data_addr_entries(&a, "127.0.0.1:7009", err, sizeof(err)) == 0);
    CHECK(a.nnets == 0 && a.naddrs == 1 && refused(&a, "10.0.0.7:7001", "outside the networks"));
    CHECK(data_addr_entries(&a, "127.0.0.0/8", err, sizeof(err)) != 0 &&
          strstr(err, "overlaps loopback"));
    CHECK(data_addr_entries(&a, "[::1]", err, sizeof(err)) != 0 && strstr(err, "must be"));
    CHECK(data_addr_entries(&a, "", err, sizeof(err)) != 0 &&
          strstr(err, "lists no network or address"));
}

static void test_shapes(void)
{
    struct data_addr_allow a;
    const char *bad[] = {"",
                         "127.0.0.1",
                         "localhost:7001",
                         "metadata.google.internal:80",
                         "2130706433:7001",
                         "127.1:7001",
                         "0177.0.0.1:7001",
                         "127.0.0.1:07001",
                         "127.0.0.1:0",
                         "127.0.0.1:65536",
                         "127.0.0.1:+7001",
                         "127.0.0.1:",
                         "::1:7001",
                         "[::1]",
                         "[::1]7001",
                         "[127.0.0.1]:7001",
                         "[::1%lo]:7001",
                         "[]:7001",
                         " 127.0.0.1:7001",
                         "127.0.0.1:7001 ",
                         "127.0.0.1:7001/x",
                         "http://127.0.0.1:7001",
                         "corral_api:7001",
                         NULL};

    data_addr_defaults(&a);
    for (int i = 0; bad[i]; i++)
        CHECK(refused(&a, bad[i], "must be an IP address and a port"));
    {
        char why[192];
        CHECK(data_addr_check(&a, "127.0.0.1\0:7001", 15, NULL, why, sizeof(why)) != 0);
        CHECK(data_addr_check(&a, "1", 0, NULL, why, sizeof(why)) != 0);
    }
}

/* Refused whatever the operator lists: even with every other network allowed. */

/* Refused even inside a configured network, with the reason they name. */
static const struct {
    const char *addr, *why;
} never[] = {
    {"169.254.169.254:80", "link-local"},
    {"0.0.0.0:7001", "unspecified"},
    {"[::]:7001", "unspecified"},
    {"[fe80::1]:7001", "link-local"},
    {"[ff02::1]:7001", "multicast"},
    {"224.0.0.1:7001", "multicast"},
    {"255.255.255.255:7001", "broadcast"},
    {"[::ffff:169.254.169.254]:80", "IPv4-mapped"},
    {"[::ffff:127.0.0.1]:7001", "IPv4-mapped"},
    {"[64:ff9b::a9fe:a9fe]:7001", "NAT64"},
    {"100.100.100.200:7001", "metadata"},
    {"[fd00:ec2::254]:7001", "metadata"},
};

static void test_never(void)
{
    struct data_addr_allow a;
    char err[192];

    data_addr_defaults(&a);
    CHECK(data_addr_networks(&a, "1.0.0.0/8 100.64.0.0/10 fd00::/8 2000::/3", err, sizeof(err)) ==
          0);
    for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
        CHECK(refused(&a, never[i].addr, never[i].why));
    CHECK(allowed(&a, "100.100.100.201:7001"));
    CHECK(allowed(&a, "[fd00:ec2::253]:7001"));
    CHECK(allowed(&a, "1.2.3.4:7001"));
}

static void test_lists(void)
{
    struct data_addr_allow a;
    char err[192];

    data_addr_defaults(&a);
    CHECK(data_addr_networks(&a, "10.1.0.0/16, 192.168.5.7", err, sizeof(err)) == 0);
    CHECK(a.nnets == 2);
    CHECK(allowed(&a, "10.1.200.3:7001"));
    CHECK(allowed(&a, "192.168.5.7:7001"));
    CHECK(refused(&a, "192.168.5.8:7001", "outside the networks"));
    CHECK(refused(&a, "10.2.0.1:7001", "outside the networks")); /* replaced, not added */
    CHECK(allowed(&a, "127.0.0.1:7001"));                        /* addresses untouched */
    CHECK(data_addr_ports(&a, "7001 8000-8100", err, sizeof(err)) == 0);
    CHECK(allowed(&a, "10.1.0.1:8100"));
    CHECK(refused(&a, "10.1.0.1:8101", "port 8101"));
    CHECK(refused(&a, "10.1.0.1:1024", "port 1024"));
    data_addr_defaults(&a);
    CHECK(data_addr_networks(&a, "10.1.0.0/16", err, sizeof(err)) == 0);
    CHECK(allowed(&a, "10.1.0.1:7001") && refused(&a, "10.1.0.1:7002", "port 7002")); /* default */
    /* entries that overlap what is never allowed: refused at load, named */
    CHECK(nets_refused("10.0.0.0/8 169.254.0.0/16", "169.254.0.0/16: covers link-local"));
    CHECK(nets_refused("169.254.169.254/32", "169.254.169.254/32: covers link-local"));
    CHECK(nets_refused("0.0.0.0/0", "0.0.0.0/0: covers unspecified"));
    CHECK(nets_refused("160.0.0.0/4", "160.0.0.0/4: covers link-local"));
    CHECK(nets_refused("::/0", "::/0: covers"));
    CHECK(nets_refused("::ffff:0:0/96", "IPv4-mapped"));
    CHECK(nets_refused("::ffff:10.0.0.0/104", "IPv4-mapped"));
    CHECK(nets_refused("fe80::/64", "link-local"));
    CHECK(nets_refused("fd00:ec2::254", "metadata"));
    CHECK(nets_refused("224.0.0.0/8", "multicast"));
    CHECK(nets_refused("10.0.0.1/8", "host bits are set"));
    CHECK(nets_refused("example.com", "not an IP network"));
    CHECK(nets_refused("10.0.0.0/33", "not an IP network"));
    CHECK(nets_refused("", "lists no network"));
    CHECK(nets_refused(" , ", "lists no network"));
    {
        char many[1024] = "";
        for (int i = 0; i < DATA_ADDR_MAX_NETS + 1; i++)
            snprintf(many + strlen(many), sizeof(many) - strlen(many), "10.%d.0.0/16 ", i);
        CHECK(nets_refused(many, "more than"));
    }
    /* a CIDR containing a lone metadata host is fine; the host itself is not */
    CHECK(data_addr_networks(&a, "100.64.0.0/10 fd00::/8", err, sizeof(err)) == 0);
    CHECK(data_addr_ports(&a, "0", err, sizeof(err)) != 0 && strstr(err, "0: not a port"));
    CHECK(data_addr_ports(&a, "9000-8000", err, sizeof(err)) != 0);
    CHECK(data_addr_ports(&a, "1-65536", err, sizeof(err)) != 0);
    CHECK(data_addr_ports(&a, "-5", err, sizeof(err)) != 0);
    CHECK(data_addr_ports(&a, "", err, sizeof(err)) != 0 && strstr(err, "lists no port"));
}

void unit_data_addr(int *total_passed, int *total_failed)
{
    test_defaults();
    test_addrs();
    test_loopback_networks();
    test_entries();
    test_shapes();
    test_never();
    test_lists();
    *total_passed += passed;
    *total_failed += failed;
}
