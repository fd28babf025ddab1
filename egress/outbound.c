/* outbound.c: the upstream proxy's own address is resolved at each dial (it
 * may move) and refused when private, loopback or reserved like any
 * destination, so a policy cannot be bypassed by pointing the upstream at
 * the host's own services; a -test-host stand-in is the one exception. */
#include "outbound.h"

#include "addr_class.h"
#include "dial.h"
#include "io.h"
#include "resolve.h"
#include "socks5.h"

#include <stdio.h>
#include <unistd.h>

#define DIAL_TIMEOUT_MS 10000

/* The upstream's addresses, all of them allowed; 0 when none may be used. */
static size_t upstream_addrs(const struct egress_conf *conf, const struct upstream *u,
                             struct ipaddr *out)
{
    const struct ipaddr *stand_in = egress_conf_test_host(conf, u->host);
    size_t n;

    if (stand_in) {
        out[0] = *stand_in;
        return 1;
    }
    if (ipaddr_parse(u->host, &out[0]) == 0)
        n = 1;
    else
        n = resolve_name(u->host, out, RESOLVE_MAX);
    for (size_t i = 0; i < n; i++)
        if (addr_is_blocked(&out[i]))
            return 0;
    return n;
}

static int via_upstream(const struct egress_conf *conf, const struct upstream *u,
                        const struct dest *d, const char **reason, char *msg, size_t msglen)
{
    struct ipaddr addrs[RESOLVE_MAX];
    size_t n = upstream_addrs(conf, u, addrs), used;
    int64_t deadline = io_now_ms() + DIAL_TIMEOUT_MS;
    const char *why;
    int fd;

    if (n == 0) {
        *reason = "upstream-refused";
        snprintf(msg, msglen,
                 "corral egress: SOCKS5 upstream does not resolve, or to a private address");
        return -1;
    }
    if ((fd = dial_first(addrs, n, u->port, DIAL_TIMEOUT_MS, &used)) < 0) {
        *reason = "upstream-connect-failed";
        snprintf(msg, msglen, "corral egress: cannot connect to the SOCKS5 upstream");
        return -1;
    }
    if (socks5_open(fd, u, d->name, d->literal, d->port, deadline, &why) != 0) {
        close(fd);
        *reason = "upstream-socks5";
        snprintf(msg, msglen, "corral egress: SOCKS5 upstream: %s", why);
        return -1;
    }
    return fd;
}

int outbound_dial(const struct egress_conf *conf, const struct upstream *u, const struct dest *d,
                  size_t *used, const char **reason, char *msg, size_t msglen)
{
    int fd;

    if (u->set) {
        *used = 0;
        return via_upstream(conf, u, d, reason, msg, msglen);
    }
    if ((fd = dial_first(d->ok, d->n_ok, d->port, DIAL_TIMEOUT_MS, used)) < 0) {
        *reason = "connect-failed";
        snprintf(msg, msglen, "corral egress: cannot connect to %.64s port %u", d->shown, d->port);
    }
    return fd;
}
