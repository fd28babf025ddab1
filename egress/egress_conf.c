#include "egress_conf.h"

#include "conf_text.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define DEFAULT_LISTEN "0.0.0.0:3128"

/* "a.b.c.d:port" or "[v6]:port". */
static int listen_parse(const char *s, struct egress_conf *c)
{
    char host[IPADDR_STRLEN + 1];
    const char *colon = strrchr(s, ':'), *h = s;
    size_t hlen;

    if (!colon)
        return -1;
    hlen = (size_t)(colon - s);
    if (s[0] == '[') {
        if (hlen < 2 || s[hlen - 1] != ']')
            return -1;
        h = s + 1;
        hlen -= 2;
    }
    if (hlen == 0 || hlen > IPADDR_STRLEN)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    if (ipaddr_parse(host, &c->listen_addr) != 0 || (s[0] == '[') != (strchr(host, ':') != NULL))
        return -1;
    return conf_port(colon + 1, &c->listen_port);
}

static bool is_loopback(const struct ipaddr *a)
{
    struct ipaddr net;
    ipaddr_parse(a->family == AF_INET ? "127.0.0.0" : "::1", &net);
    return ipaddr_in_prefix(a, &net, a->family == AF_INET ? 8 : 128);
}

/* NAME=ADDR, ADDR loopback. */
static int test_host_add(struct egress_conf *c, const char *val)
{
    const char *eq = strchr(val, '=');
    char name[HOSTNAME_MAX + 1];
    struct test_host *h = &c->test_hosts[c->n_test_hosts];

    if (!eq || c->n_test_hosts == TEST_HOSTS_MAX || (size_t)(eq - val) > HOSTNAME_MAX)
        return -1;
    memcpy(name, val, (size_t)(eq - val));
    name[eq - val] = '\0';
    if (hostname_normalize(name, h->name) != 0 || ipaddr_parse(eq + 1, &h->addr) != 0 ||
        !is_loopback(&h->addr))
        return -1;
    c->n_test_hosts++;
    return 0;
}

static int set(struct egress_conf *c, const char *flag, const char *val, const char **policy,
               char *sandbox, char *err, size_t errlen)
{
    if (strcmp(flag, "listen") == 0) {
        if (listen_parse(val, c) != 0)
            return conf_fail(err, errlen, "-listen: want ADDR:PORT or [V6]:PORT, got \"%.64s\"",
                             val);
    } else if (strcmp(flag, "sandbox") == 0) {
        if (!settings_sandbox_ok(val))
            return conf_fail(err, errlen, "-sandbox: want 1-%d of [A-Za-z0-9._-]", SANDBOX_ID_MAX);
        snprintf(sandbox, SANDBOX_ID_MAX + 1, "%s", val);
    } else if (strcmp(flag, "policy") == 0) {
        *policy = val;
    } else if (strcmp(flag, "config-file") == 0) {
        if (val[0] != '/' || strlen(val) > CONFIG_PATH_MAX)
            return conf_fail(err, errlen, "-config-file: want an absolute path of at most %d bytes",
                             CONFIG_PATH_MAX);
        memcpy(c->config_file, val, strlen(val) + 1);
    } else if (strcmp(flag, "test-host") == 0) {
        if (test_host_add(c, val) != 0)
            return conf_fail(err, errlen, "-test-host: want NAME=LOOPBACK-ADDR, at most %d",
                             TEST_HOSTS_MAX);
    } else {
        return conf_fail(err, errlen, "unknown flag -%.32s", flag);
    }
    return 0;
}

int egress_conf_parse(int argc, char **argv, struct egress_conf *c, char *err, size_t errlen)
{
    const char *policy = NULL;
    char sandbox[SANDBOX_ID_MAX + 1] = "";

    memset(c, 0, sizeof(*c));
    if (listen_parse(DEFAULT_LISTEN, c) != 0)
        return conf_fail(err, errlen, "bad default listen address");
    for (int i = 1; i < argc; i += 2) {
        const char *flag = argv[i];
        if (flag[0] != '-')
            return conf_fail(err, errlen, "unexpected argument \"%.64s\"", flag);
        flag += flag[1] == '-' ? 2 : 1;
        if (i + 1 >= argc)
            return conf_fail(err, errlen, "-%.32s needs a value", flag);
        if (set(c, flag, argv[i + 1], &policy, sandbox, err, errlen) != 0)
            return -1;
    }
    if (c->n_test_hosts && !is_loopback(&c->listen_addr))
        return conf_fail(err, errlen, "-test-host: only with a loopback -listen");
    if (c->config_file[0])
        return sandbox[0] || policy
                   ? conf_fail(err, errlen, "-config-file replaces -sandbox and -policy")
                   : 0;
    if (sandbox[0] == '\0')
        return conf_fail(err, errlen, "-sandbox is required");
    if (!policy)
        return conf_fail(err, errlen, "-policy is required (\"{}\" allows every public host)");
    if (settings_from_policy(policy, &c->settings, err, errlen) != 0)
        return -1;
    memcpy(c->settings.sandbox, sandbox, sizeof(sandbox));
    return 0;
}

int egress_conf_take_file(struct egress_conf *c, const char *text, char *err, size_t errlen)
{
    return settings_from_file(text, &c->settings, err, errlen);
}

void egress_conf_free(struct egress_conf *c)
{
    settings_free(&c->settings);
}

const struct ipaddr *egress_conf_test_host(const struct egress_conf *c, const char *name)
{
    for (size_t i = 0; i < c->n_test_hosts; i++)
        if (strcmp(c->test_hosts[i].name, name) == 0)
            return &c->test_hosts[i].addr;
    return NULL;
}
