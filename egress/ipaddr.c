#include "ipaddr.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* Mapped addresses reach the IPv4 host they embed; fold them into it so no
 * rule can be dodged by spelling 127.0.0.1 as ::ffff:127.0.0.1. */
static void fold_mapped(struct ipaddr *a)
{
    if (a->family == AF_INET6 && memcmp(a->b, v4_mapped_prefix, 12) == 0) {
        memmove(a->b, a->b + 12, 4);
        memset(a->b + 4, 0, 12);
        a->family = AF_INET;
    }
}

int ipaddr_parse(const char *s, struct ipaddr *out)
{
    memset(out, 0, sizeof(*out));
    if (inet_pton(AF_INET, s, out->b) == 1) {
        out->family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, s, out->b) == 1) {
        out->family = AF_INET6;
        fold_mapped(out);
        return 0;
    }
    return -1;
}

void ipaddr_from_rule(const struct egress_rule *r, struct ipaddr *net, int *bits)
{
    memset(net, 0, sizeof(*net));
    net->family = r->family;
    memcpy(net->b, r->addr, r->family == AF_INET ? 4 : 16);
    *bits = r->prefix;
    /* "::ffff:0:0/96" keeps its IPv6 meaning; narrower mapped ranges are IPv4's. */
    if (net->family == AF_INET6 && *bits >= 96 && memcmp(net->b, v4_mapped_prefix, 12) == 0) {
        fold_mapped(net);
        *bits -= 96;
    }
}

void ipaddr_from_sockaddr(const struct sockaddr *sa, struct ipaddr *out)
{
    memset(out, 0, sizeof(*out));
    out->family = sa->sa_family;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        memcpy(out->b, &in->sin_addr, 4);
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        memcpy(out->b, &in6->sin6_addr, 16);
        fold_mapped(out);
    }
}

socklen_t ipaddr_to_sockaddr(const struct ipaddr *a, unsigned port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (a->family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        in->sin_family = AF_INET;
        in->sin_port = htons((unsigned short)port);
        memcpy(&in->sin_addr, a->b, 4);
        return sizeof(*in);
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((unsigned short)port);
    memcpy(&in6->sin6_addr, a->b, 16);
    return sizeof(*in6);
}

bool ipaddr_in_prefix(const struct ipaddr *a, const struct ipaddr *net, int bits)
{
    if (a->family != net->family)
        return false;
    int full = bits / 8, rest = bits % 8;
    if (memcmp(a->b, net->b, (size_t)full) != 0)
        return false;
    if (rest == 0)
        return true;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return (a->b[full] & mask) == (net->b[full] & mask);
}

void ipaddr_format(const struct ipaddr *a, char *buf, size_t n)
{
    if (!inet_ntop(a->family, a->b, buf, (socklen_t)n) && n > 0)
        snprintf(buf, n, "?");
}
