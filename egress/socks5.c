#include "socks5.h"

#include "io.h"
#include "socks5_wire.h"

#include <openssl/crypto.h>

static int step(int fd, const unsigned char *msg, size_t n, unsigned char *in, size_t want,
                int64_t deadline, const char **why)
{
    if (io_write_all(fd, msg, n, deadline) != 0 || io_read_exact(fd, in, want, deadline) != 0) {
        *why = "the proxy closed or did not answer";
        return -1;
    }
    return 0;
}

static int authenticate(int fd, const struct upstream *u, int64_t deadline, const char **why)
{
    unsigned char msg[SOCKS5_MSG_MAX], in[2];
    size_t n = socks5_auth(msg, u->user, u->pass);
    int rc = step(fd, msg, n, in, sizeof(in), deadline, why);

    OPENSSL_cleanse(msg, sizeof(msg)); /* the password */
    if (rc == 0 && (*why = socks5_auth_check(in)))
        rc = -1;
    return rc;
}

int socks5_open(int fd, const struct upstream *u, const char *name, const struct ipaddr *literal,
                unsigned port, int64_t deadline, const char **why)
{
    unsigned char msg[SOCKS5_MSG_MAX], in[SOCKS5_MSG_MAX];
    bool auth = u->user[0] != '\0';
    size_t n = socks5_greeting(msg, auth), rest = 0;

    if (step(fd, msg, n, in, 2, deadline, why) != 0)
        return -1;
    if ((*why = socks5_method_check(in, auth)))
        return -1;
    if (auth && authenticate(fd, u, deadline, why) != 0)
        return -1;
    n = socks5_connect(msg, name, literal, port);
    if (step(fd, msg, n, in, 5, deadline, why) != 0)
        return -1;
    if ((*why = socks5_reply_check(in, &rest)))
        return -1;
    if (io_read_exact(fd, in + 5, rest, deadline) != 0) {
        *why = "the proxy closed during its reply";
        return -1;
    }
    return 0;
}
