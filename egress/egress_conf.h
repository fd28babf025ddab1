/* egress_conf.h: corral-egress's command line: -listen ADDR:PORT and either
 * -sandbox ID -policy JSON, or -config-file PATH (a pre-started proxy: the
 * file, written when workerd assigns it to a sandbox, is read by
 * settings_from_file in either of its forms, and again on SIGHUP).
 *
 * -test-host NAME=ADDR (repeatable) is for tests only: NAME resolves to ADDR
 * alone, never through DNS, and ADDR, which must be loopback, is judged by
 * the policy but not refused as loopback (nor as the SOCKS5 upstream). It is
 * accepted only with a loopback -listen, so a proxy using it serves no
 * sandbox: workerd always starts its proxies on 0.0.0.0, a sandbox's only way
 * in. */
#ifndef CORRAL_EGRESS_CONF_H
#define CORRAL_EGRESS_CONF_H

#include "ipaddr.h"
#include "settings.h"

#include <stddef.h>

#define CONFIG_PATH_MAX 256
#define TEST_HOSTS_MAX 8

struct test_host {
    char name[HOSTNAME_MAX + 1]; /* normalized */
    struct ipaddr addr;
};

struct egress_conf {
    struct ipaddr listen_addr;
    unsigned listen_port;
    char config_file[CONFIG_PATH_MAX + 1]; /* "" unless -config-file */
    struct settings settings;              /* the first; a reload replaces live.h's copy */
    struct test_host test_hosts[TEST_HOSTS_MAX];
    size_t n_test_hosts;
};

/* 0, or -1 with err naming the bad flag and why. */
int egress_conf_parse(int argc, char **argv, struct egress_conf *c, char *err, size_t errlen);
void egress_conf_free(struct egress_conf *c);

/* The -test-host address of a normalized name, or NULL (nearly always). */
const struct ipaddr *egress_conf_test_host(const struct egress_conf *c, const char *name);

/* -config-file: the file's text (settings.h), as -sandbox and -policy.
 * 0, or -1 with err. */
int egress_conf_take_file(struct egress_conf *c, const char *text, char *err, size_t errlen);

#endif
