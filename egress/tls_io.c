#include "tls_io.h"

#include "http_status.h"
#include "io.h"

#include <openssl/err.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

/* Waits for what the last call on s asked for: 0 to retry, -1 to give up. */
static int await(SSL *s, int fd, int rc, int64_t deadline)
{
    int e = SSL_get_error(s, rc);
    if (e == SSL_ERROR_WANT_READ)
        return io_wait(fd, POLLIN, deadline) > 0 ? 0 : -1;
    if (e == SSL_ERROR_WANT_WRITE)
        return io_wait(fd, POLLOUT, deadline) > 0 ? 0 : -1;
    ERR_clear_error();
    return -1;
}

int tls_handshake(SSL *s, int fd, int64_t deadline)
{
    int rc;
    while ((rc = SSL_do_handshake(s)) != 1)
        if (await(s, fd, rc, deadline) != 0)
            return -1;
    return 0;
}

int tls_write_all(SSL *s, int fd, const void *buf, size_t n, int64_t deadline)
{
    const char *p = buf;
    size_t w;

    while (n > 0) {
        int rc = SSL_write_ex(s, p, n, &w);
        if (rc == 1) {
            p += w;
            n -= w;
        } else if (await(s, fd, rc, deadline) != 0) {
            return -1;
        }
    }
    return 0;
}

void tls_reply_error(SSL *s, int fd, int status, const char *body, int64_t deadline)
{
    char buf[1024];
    int n = snprintf(buf, sizeof(buf),
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
                     status, http_status_text(status), strlen(body) + 1, body);
    if (n > 0 && (size_t)n < sizeof(buf) && tls_write_all(s, fd, buf, (size_t)n, deadline) == 0)
        SSL_shutdown(s);
}
