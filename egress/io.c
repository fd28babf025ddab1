#include "io.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

int64_t io_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int io_left_ms(int64_t deadline)
{
    int64_t left = deadline - io_now_ms();
    return left < 0 ? 0 : (int)left;
}

int io_write_all(int fd, const void *buf, size_t n, int64_t deadline)
{
    const char *p = buf;

    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int left = io_left_ms(deadline);
        if (left == 0 || (poll(&pfd, 1, left) < 0 && errno != EINTR))
            return -1;
    }
    return 0;
}

int io_wait(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = events};
        int left = io_left_ms(deadline), r = left ? poll(&pfd, 1, left) : 0;
        if (r >= 0)
            return r > 0 ? 1 : 0;
        if (errno != EINTR)
            return -1;
    }
}

int io_read_exact(int fd, void *buf, size_t n, int64_t deadline)
{
    char *p = buf;

    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
        } else if (r == 0 || (errno != EAGAIN && errno != EINTR) ||
                   io_wait(fd, POLLIN, deadline) <= 0) {
            return -1;
        }
    }
    return 0;
}
