#include "socks5_wire.h"

#include <string.h>
#include <sys/socket.h>

#define VER 5
#define M_NONE 0
#define M_USERPASS 2
#define CMD_CONNECT 1
#define ATYP_V4 1
#define ATYP_NAME 3
#define ATYP_V6 4

size_t socks5_greeting(unsigned char *out, bool auth)
{
    out[0] = VER;
    out[1] = 1;
    out[2] = auth ? M_USERPASS : M_NONE;
    return 3;
}

const char *socks5_method_check(const unsigned char in[2], bool auth)
{
    if (in[0] != VER)
        return "not a SOCKS5 server";
    if (in[1] != (auth ? M_USERPASS : M_NONE))
        return auth ? "username/password authentication not accepted"
                    : "the proxy wants authentication";
    return NULL;
}

size_t socks5_auth(unsigned char *out, const char *user, const char *pass)
{
    size_t ul = strlen(user), pl = strlen(pass), n = 0;

    out[n++] = 1;
    out[n++] = (unsigned char)ul;
    /* Length-prefixed fields: no NUL on the wire. */
    // NOLINTNEXTLINE(bugprone-not-null-terminated-result)
    memcpy(out + n, user, ul);
    n += ul;
    out[n++] = (unsigned char)pl;
    // NOLINTNEXTLINE(bugprone-not-null-terminated-result)
    memcpy(out + n, pass, pl);
    return n + pl;
}

const char *socks5_auth_check(const unsigned char in[2])
{
    return in[0] == 1 && in[1] == 0 ? NULL : "authentication failed";
}

size_t socks5_connect(unsigned char *out, const char *name, const struct ipaddr *literal,
                      unsigned port)
{
    size_t n = 0;

    out[n++] = VER;
    out[n++] = CMD_CONNECT;
    out[n++] = 0;
    if (literal) {
        size_t al = literal->family == AF_INET ? 4 : 16;
        out[n++] = literal->family == AF_INET ? ATYP_V4 : ATYP_V6;
        memcpy(out + n, literal->b, al);
        n += al;
    } else {
        size_t nl = strlen(name); /* a host name: at most 253 */
        out[n++] = ATYP_NAME;
        out[n++] = (unsigned char)nl;
        memcpy(out + n, name, nl);
        n += nl;
    }
    out[n++] = (unsigned char)(port >> 8);
    out[n++] = (unsigned char)(port & 0xff);
    return n;
}

static const char *reply_text(unsigned char rep)
{
    static const char *const text[] = {
        "succeeded",           "general failure",       "connection not allowed by ruleset",
        "network unreachable", "host unreachable",      "connection refused",
        "TTL expired",         "command not supported", "address type not supported"};
    return rep < sizeof(text) / sizeof(text[0]) ? text[rep] : "unknown reply code";
}

const char *socks5_reply_check(const unsigned char in[5], size_t *rest)
{
    if (in[0] != VER)
        return "not a SOCKS5 reply";
    if (in[1] != 0)
        return reply_text(in[1]);
    /* Five bytes read: the address's first (or a name's length) among them. */
    if (in[3] == ATYP_V4)
        *rest = 4 - 1 + 2;
    else if (in[3] == ATYP_V6)
        *rest = 16 - 1 + 2;
    else if (in[3] == ATYP_NAME)
        *rest = (size_t)in[4] + 2;
    else
        return "bad address type in reply";
    return NULL;
}
