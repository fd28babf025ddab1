#include "dial.h"

#include "io.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

static int dial_one(const struct ipaddr *a, unsigned port, int timeout_ms)
{
    struct sockaddr_storage ss;
    socklen_t sl = ipaddr_to_sockaddr(a, port, &ss);
    int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int64_t deadline = io_now_ms() + timeout_ms;
    int err = 0, one = 1;
    socklen_t el = sizeof(err);

    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&ss, sl) != 0) {
        if (errno != EINPROGRESS)
            goto fail;
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int r;
        while ((r = poll(&pfd, 1, io_left_ms(deadline))) < 0 && errno == EINTR)
            ;
        if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0)
            goto fail;
    }
    /* Interactive protocols through CONNECT (ssh, databases) need no delay. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
fail:
    close(fd);
    return -1;
}

int dial_first(const struct ipaddr *addrs, size_t n, unsigned port, int timeout_ms, size_t *used)
{
    for (size_t i = 0; i < n; i++) {
        int fd = dial_one(&addrs[i], port, timeout_ms);
        if (fd >= 0) {
            *used = i;
            return fd;
        }
    }
    return -1;
}
