/* addr_class.c: private, loopback, link-local, CGNAT, metadata, multicast and
 * reserved ranges. IPv6 forms that carry an IPv4 address the network will
 * deliver to (mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16)
 * are judged by that IPv4 address, so 64:ff9b::a9fe:a9fe is the metadata
 * service, not a public host. */
#include "addr_class.h"

#include <netinet/in.h>
#include <string.h>

struct range {
    unsigned char net[16];
    int bits;
};

static const struct range blocked_v4[] = {
    {{0, 0, 0, 0}, 8},      {{10, 0, 0, 0}, 8},    {{100, 64, 0, 0}, 10},  {{127, 0, 0, 0}, 8},
    {{169, 254, 0, 0}, 16}, {{172, 16, 0, 0}, 12}, {{192, 168, 0, 0}, 16}, {{192, 0, 0, 0}, 24},
    {{198, 18, 0, 0}, 15},  {{224, 0, 0, 0}, 4},   {{240, 0, 0, 0}, 4},
};

/* fec0::/10 (deprecated site-local) is refused too: nothing public lives
 * there and some stacks still route it locally. */
static const struct range blocked_v6[] = {
    {{0xfc}, 7},
    {{0xfe, 0x80}, 10},
    {{0xfe, 0xc0}, 10},
    {{0xff}, 8},
};

/* Prefixes whose bytes [off, off+4) are an IPv4 address to judge instead.
 * ::/96 (IPv4-compatible) covers :: and ::1 as 0.0.0.0 and 0.0.0.1. */
static const struct {
    struct range r;
    int off;
} embeds_v4[] = {
    {{{0}, 96}, 12},
    {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96}, 12},
    {{{0, 0x64, 0xff, 0x9b}, 96}, 12},
    {{{0x20, 0x02}, 16}, 2},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool in_ranges(const struct ipaddr *a, const struct range *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct ipaddr net = {.family = a->family};
        memcpy(net.b, r[i].net, sizeof(net.b));
        if (ipaddr_in_prefix(a, &net, r[i].bits))
            return true;
    }
    return false;
}

bool addr_is_blocked(const struct ipaddr *a)
{
    if (a->family == AF_INET)
        return in_ranges(a, blocked_v4, COUNT(blocked_v4));
    if (a->family != AF_INET6)
        return true;
    for (size_t i = 0; i < COUNT(embeds_v4); i++) {
        struct ipaddr net = {.family = AF_INET6};
        memcpy(net.b, embeds_v4[i].r.net, sizeof(net.b));
        if (ipaddr_in_prefix(a, &net, embeds_v4[i].r.bits)) {
            struct ipaddr v4 = {.family = AF_INET};
            memcpy(v4.b, a->b + embeds_v4[i].off, 4);
            return in_ranges(&v4, blocked_v4, COUNT(blocked_v4));
        }
    }
    return in_ranges(a, blocked_v6, COUNT(blocked_v6));
}
