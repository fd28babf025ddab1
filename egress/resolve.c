#include "resolve.h"

#include <netdb.h>
#include <string.h>

static bool seen(const struct ipaddr *out, size_t n, const struct ipaddr *a)
{
    for (size_t i = 0; i < n; i++)
        if (out[i].family == a->family && memcmp(out[i].b, a->b, sizeof(a->b)) == 0)
            return true;
    return false;
}

size_t resolve_name(const char *name, struct ipaddr *out, size_t max)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    size_t n = 0;

    if (getaddrinfo(name, NULL, &hints, &res) != 0)
        return 0;
    for (ai = res; ai && n < max; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        ipaddr_from_sockaddr(ai->ai_addr, &out[n]);
        if (!seen(out, n, &out[n]))
            n++;
    }
    freeaddrinfo(res);
    return n;
}
