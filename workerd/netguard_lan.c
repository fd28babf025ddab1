#include "netguard.h"

#include "sbnet.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

static void clear_host_bits(unsigned char *addr, int len, int prefix)
{
    for (int bit = prefix; bit < len * 8; bit++)
        addr[bit / 8] &= (unsigned char)~(0x80 >> (bit % 8));
}

void netguard_lan_add(struct netguard_lan *out, int family, const unsigned char *addr, int prefix)
{
    int len = family == AF_INET ? 4 : 16, *n = family == AF_INET ? &out->n4 : &out->n6;
    char(*list)[64] = family == AF_INET ? out->v4 : out->v6;
    unsigned char net[16];
    char text[INET6_ADDRSTRLEN], entry[64];

    if (prefix < 0 || prefix > len * 8 || *n == NETGUARD_MAX_LAN)
        return;
    memcpy(net, addr, (size_t)len);
    clear_host_bits(net, len, prefix);
    if (!inet_ntop(family, net, text, sizeof(text)))
        return;
    snprintf(entry, sizeof(entry), "%s/%d", text, prefix);
    for (int i = 0; i < *n; i++)
        if (strcmp(list[i], entry) == 0)
            return;
    snprintf(list[(*n)++], sizeof(list[0]), "%s", entry);
}

int netguard_lan_same(const struct netguard_lan *a, const struct netguard_lan *b)
{
    if (a->n4 != b->n4 || a->n6 != b->n6)
        return 0;
    for (int i = 0; i < a->n4; i++)
        if (strcmp(a->v4[i], b->v4[i]) != 0)
            return 0;
    for (int i = 0; i < a->n6; i++)
        if (strcmp(a->v6[i], b->v6[i]) != 0)
            return 0;
    return 1;
}

static int prefix_len(const unsigned char *mask, int len)
{
    int bits = 0;

    for (int i = 0; i < len; i++)
        for (int b = 7; b >= 0 && (mask[i] >> b) & 1; b--)
            bits++;
    return bits;
}

/* Sandbox bridges are inside the address pools, blocked already; their many
 * networks would only make the set churn with every create. */
static int skipped(const struct ifaddrs *ifa)
{
    return !ifa->ifa_addr || !ifa->ifa_netmask || (ifa->ifa_flags & IFF_LOOPBACK) ||
           strncmp(ifa->ifa_name, SBNET_IF_OPEN, strlen(SBNET_IF_OPEN)) == 0 ||
           strncmp(ifa->ifa_name, SBNET_IF_INTERNAL, strlen(SBNET_IF_INTERNAL)) == 0;
}

void netguard_host_lan(struct netguard_lan *out)
{
    struct ifaddrs *all = NULL;

    memset(out, 0, sizeof(*out));
    if (getifaddrs(&all) != 0)
        return;
    for (const struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next) {
        if (skipped(ifa))
            continue;
        if (ifa->ifa_addr->sa_family == AF_INET) {
            const unsigned char *a =
                (const unsigned char *)&((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
            const unsigned char *m =
                (const unsigned char *)&((const struct sockaddr_in *)ifa->ifa_netmask)->sin_addr;
            netguard_lan_add(out, AF_INET, a, prefix_len(m, 4));
        } else if (ifa->ifa_addr->sa_family == AF_INET6) {
            const unsigned char *a =
                ((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr.s6_addr;
            const unsigned char *m =
                ((const struct sockaddr_in6 *)ifa->ifa_netmask)->sin6_addr.s6_addr;
            netguard_lan_add(out, AF_INET6, a, prefix_len(m, 16));
        }
    }
    freeifaddrs(all);
}
