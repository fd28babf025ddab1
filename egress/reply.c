#include "reply.h"

#include "http_status.h"
#include "io.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LINGER_MS 1000
#define LINGER_BYTES (256 * 1024)

int reply_error(int fd, int status, const char *body, int64_t deadline)
{
    char buf[1024];
    int n = snprintf(buf, sizeof(buf),
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
                     status, http_status_text(status), strlen(body) + 1, body);
    if (n < 0 || (size_t)n >= sizeof(buf))
        return -1;
    return io_write_all(fd, buf, (size_t)n, deadline);
}

void reply_close(int fd)
{
    int64_t deadline = io_now_ms() + LINGER_MS;
    size_t total = 0;
    char sink[4096];

    shutdown(fd, SHUT_WR);
    while (total < LINGER_BYTES) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int left = io_left_ms(deadline);
        if (left == 0 || poll(&pfd, 1, left) <= 0)
            break;
        ssize_t r = recv(fd, sink, sizeof(sink), 0);
        if (r <= 0)
            break;
        total += (size_t)r;
    }
    close(fd);
}

void reply_log(const char *sandbox, bool allow, const struct http_req *r, const struct ipaddr *addr,
               const char *reason)
{
    char a[IPADDR_STRLEN] = "-";

    if (addr)
        ipaddr_format(addr, a, sizeof(a));
    if (!r) {
        fprintf(stderr, "egress sandbox=%s %s - - %s %s\n", sandbox, allow ? "allow" : "refuse", a,
                reason);
        return;
    }
    /* Method and host were checked to be tokens and host characters. */
    fprintf(stderr, "egress sandbox=%s %s %s %s%s%s:%u %s %s\n", sandbox,
            allow ? "allow" : "refuse", r->method, r->bracketed ? "[" : "", r->host,
            r->bracketed ? "]" : "", r->port, a, reason);
}
