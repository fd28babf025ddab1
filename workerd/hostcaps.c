/* hostcaps.c: what this worker can promise its sandboxes, found at start and
 * kept checked.
 *
 * Network isolation is not optional: if the rules cannot be installed workerd
 * refuses to start, and if they vanish later (a firewall reload flushed them)
 * they are put back before the next heartbeat; while they are missing, creates
 * fail with the reason rather than start a sandbox nobody walled off. Egress
 * policies need the proxy binary and its image; disk limits need a dockerd
 * whose storage can limit a container's writable layer. */
#include "worker.h"

#include "clock.h"
#include "log.h"
#include "netguard.h"
#include "sbnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECHECK_MS 10000
#define CAPS_TIMEOUT_MS 30000L

static int64_t next_check_ms;

static void dns_servers(const struct worker_conf *c, struct netguard_dns *dns)
{
    static const char *const files[] = {"/etc/resolv.conf", "/run/systemd/resolve/resolv.conf"};
    char buf[4096], err[128];

    memset(dns, 0, sizeof(*dns));
    if (c->dns_servers[0]) {
        if (netguard_parse_list(c->dns_servers, dns, err, sizeof(err)) != 0)
            log_warn("dns_servers: %s", err);
        return;
    }
    /* Docker's embedded DNS forwards to these; a loopback stub is skipped,
     * and then systemd-resolved's upstream list is what Docker uses. */
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && dns->n4 + dns->n6 == 0; i++) {
        FILE *f = fopen(files[i], "r");
        size_t n;
        if (!f)
            continue;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        netguard_parse_resolv(buf, dns);
    }
}

static int image_exists(struct docker *d, const char *image)
{
    char path[WCONF_STR + 32], err[128];
    json_t *ans = NULL;
    long status = 0;

    snprintf(path, sizeof(path), "/images/%s/json", image);
    if (docker_call(d, "GET", path, NULL, CAPS_TIMEOUT_MS, &status, &ans, err, sizeof(err)) != 0)
        return 0;
    json_decref(ans);
    return status == 200;
}

static int egress_available(struct docker *d, const struct worker_conf *c)
{
    char err[512];

    if (wconf_check_bin("egress_bin", c->egress_bin, err, sizeof(err)) != 0) {
        log_warn("egress policies unavailable: %s", err);
        return 0;
    }
    if (!image_exists(d, c->egress_image)) {
        log_warn("egress policies unavailable: image %s not found (make images)", c->egress_image);
        return 0;
    }
    if (sbnet_ensure(d, "", "", SBNET_EGRESS, c->egress_subnet, err, sizeof(err)) != 0) {
        log_warn("egress policies unavailable: %s", err);
        return 0;
    }
    return 1;
}

static void remove_probe(struct docker *d, const char *name)
{
    char path[160], err[256];
    json_t *ans = NULL;
    long status = 0;

    snprintf(path, sizeof(path), "/containers/%s?force=1", name);
    if (docker_call(d, "DELETE", path, NULL, CAPS_TIMEOUT_MS, &status, &ans, err, sizeof(err)) == 0)
        json_decref(ans);
}

/* dockerd refuses StorageOpt size at create unless its storage supports it
 * (overlay2 on xfs with pquota, btrfs), so a throwaway create tells. It is
 * removed whatever happened, and any leftover of a crashed start first. */
static int disk_quota_available(struct docker *d, const struct worker_conf *c)
{
    char name[64], path[128], err[256];
    json_t *body = json_pack("{s:s, s:{s:{s:s}}}", "Image", c->probe_image, "HostConfig",
                             "StorageOpt", "size", "1G"),
           *ans = NULL;
    long status = 0;
    int ok;

    snprintf(name, sizeof(name), "corral-diskprobe-%ld", (long)getpid());
    remove_probe(d, name);
    snprintf(path, sizeof(path), "/containers/create?name=%s", name);
    if (docker_call(d, "POST", path, body, CAPS_TIMEOUT_MS, &status, &ans, err, sizeof(err)) != 0)
        status = 0;
    json_decref(body);
    ok = status == 201;
    if (!ok)
        log_warn("disk limits unavailable: dockerd says %.200s", docker_errmsg(ans, status));
    json_decref(ans);
    remove_probe(d, name);
    return ok;
}

/* The host's networks the installed table blocks: an interface that comes or
 * goes (a new LAN, a VPN) puts the table in again at the next recheck. */
static struct netguard_lan installed_lan;

int hostcaps_init(struct worker *w, char *err, size_t errlen)
{
    struct netguard_dns dns;
    char why[512];

    dns_servers(w->conf, &dns);
    netguard_host_lan(&installed_lan);
    if (netguard_install(&dns, &installed_lan, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "cannot wall sandboxes off (%s)", why);
        return -1;
    }
    w->caps.walled = 1;
    w->caps.egress = egress_available(&w->dk, w->conf);
    w->caps.disk_quota = disk_quota_available(&w->dk, w->conf);
    next_check_ms = clock_now_ms() + RECHECK_MS;
    log_info("network isolation rules in place (%d resolvers open on port 53, %d host networks "
             "blocked); egress policies %s; disk limits %s",
             dns.n4 + dns.n6, installed_lan.n4 + installed_lan.n6, w->caps.egress ? "on" : "off",
             w->caps.disk_quota ? "on" : "off");
    return 0;
}

void hostcaps_recheck(struct worker *w, int now)
{
    struct netguard_dns dns;
    struct netguard_lan lan;
    char err[512];

    if (w->conf->agent.on || (!now && clock_now_ms() < next_check_ms))
        return; /* an agent has no sandbox network to wall off */
    next_check_ms = clock_now_ms() + RECHECK_MS;
    netguard_host_lan(&lan);
    if (!netguard_lan_same(&lan, &installed_lan))
        log_info("the host's networks changed; installing the isolation rules again");
    else if (netguard_check(err, sizeof(err)) == 0) {
        w->caps.walled = 1;
        return;
    } else
        log_warn("network isolation rules missing (%s); installing them again", err);
    dns_servers(w->conf, &dns);
    installed_lan = lan;
    w->caps.walled = netguard_install(&dns, &lan, err, sizeof(err)) == 0;
    if (!w->caps.walled)
        log_err("network isolation rules cannot be installed (%s); creates fail until they are",
                err);
}
