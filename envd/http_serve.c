#include "http_serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

struct conn_args {
    int fd, idle_ms;
    http_serve_fn serve;
};

static void *connection_main(void *arg)
{
    struct conn_args a = *(struct conn_args *)arg;
    struct http_conn *c = malloc(sizeof(*c));
    struct http_req *r = malloc(sizeof(*r));

    free(arg);
    if (c == NULL || r == NULL)
        goto out;
    c->fd = a.fd;
    c->len = c->off = 0;
    for (;;) {
        int rc = http_read_request(c, r, a.idle_ms);
        if (rc <= 0)
            break;
        a.serve(r);
        if (!r->head_sent) {
            r->keep_alive = 0;
            http_send_error(r, 500, "no response");
        }
        /* Leftover request body: skip a little, otherwise close rather than read on. */
        if (!r->body_done && http_body_drain(r, 1 << 20) < 0)
            break;
        if (!r->keep_alive)
            break;
    }
out:
    free(c);
    free(r);
    close(a.fd);
    return NULL;
}

static void start_connection(int fd, http_serve_fn serve, int idle_ms, int io_timeout_s,
                             void (*log)(const char *fmt, ...))
{
    struct conn_args *a = malloc(sizeof(*a));
    pthread_attr_t attr;
    pthread_t t;
    struct timeval tv = {.tv_sec = io_timeout_s};
    int one = 1;

    if (!a) {
        close(fd);
        return;
    }
    *a = (struct conn_args){.fd = fd, .idle_ms = idle_ms, .serve = serve};
    /* Small frames of a stream must not wait for Nagle. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* A peer that stops reading or sending for this long is gone. */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (pthread_create(&t, &attr, connection_main, a) != 0) {
        log("cannot start a connection thread: %s", strerror(errno));
        free(a);
        close(fd);
    }
    pthread_attr_destroy(&attr);
}

int http_listen(const char *addr, int port, char *err, size_t errlen)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd, one = 1;

    if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
        snprintf(err, errlen, "invalid listen address %s", addr);
        return -1;
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 512) < 0) {
        snprintf(err, errlen, "cannot listen on %s:%d: %s", addr, port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

void http_serve_forever(int lfd, http_serve_fn serve, int idle_ms, int io_timeout_s,
                        void (*log)(const char *fmt, ...))
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EINTR && errno != ECONNABORTED)
                log("accept: %s", strerror(errno));
            if (errno == EMFILE || errno == ENFILE)
                usleep(100 * 1000);
            continue;
        }
        start_connection(fd, serve, idle_ms, io_timeout_s, log);
    }
}
