#include "tunnel_dial.h"

#include "clock.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIAL_TIMEOUT_MS 10000
#define HEAD_MAX 4096

/* libcurl's answer as a read or write's: EAGAIN for "nothing now". */
static ssize_t as_io(CURLcode rc, size_t n)
{
    if (rc == CURLE_OK)
        return (ssize_t)n;
    errno = rc == CURLE_AGAIN ? EAGAIN : ECONNRESET;
    return -1;
}

static ssize_t io_recv(void *ctx, void *buf, size_t n)
{
    size_t got = 0;
    CURLcode rc = curl_easy_recv(((struct tunnel_conn *)ctx)->curl, buf, n, &got);

    return as_io(rc, got);
}

static ssize_t io_send(void *ctx, const void *buf, size_t n)
{
    size_t sent = 0;
    CURLcode rc = curl_easy_send(((struct tunnel_conn *)ctx)->curl, buf, n, &sent);

    return as_io(rc, sent);
}

void tunnel_io(struct tunnel_conn *t, struct h2b_io *io)
{
    io->ctx = t;
    io->recv = io_recv;
    io->send = io_send;
    io->fd = t->fd;
}

/* Waits for the connection to be ready (POLLIN or POLLOUT) until deadline. */
static int wait_fd(int fd, short ev, int64_t until)
{
    struct pollfd p = {.fd = fd, .events = ev};
    int64_t left = until - clock_now_ms();

    return left > 0 && poll(&p, 1, (int)left) > 0 ? 0 : -1;
}

static int send_all(struct tunnel_conn *t, const char *buf, size_t len, int64_t until)
{
    while (len > 0) {
        ssize_t n = io_send(t, buf, len);

        if (n < 0 && errno == EAGAIN) {
            if (wait_fd(t->fd, POLLOUT, until) != 0)
                return -1;
            continue;
        }
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The answer's head, a byte at a time: what follows it is the bridge's. */
static int read_head(struct tunnel_conn *t, char *buf, size_t cap, int64_t until)
{
    size_t n = 0;

    while (n + 1 < cap && !(n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)) {
        ssize_t r = io_recv(t, buf + n, 1);

        if (r < 0 && errno == EAGAIN) {
            if (wait_fd(t->fd, POLLIN, until) != 0)
                return -1;
            continue;
        }
        if (r <= 0)
            return -1;
        n++;
    }
    buf[n] = '\0';
    return n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0 ? 0 : -1;
}

static int connect_tls(const struct worker_conf *c, struct tunnel_conn *t, char *why, size_t whylen)
{
    char url[WCONF_STR + 32];
    curl_socket_t s = CURL_SOCKET_BAD;
    CURLcode rc;

    snprintf(url, sizeof(url), "%s/v1/worker/tunnel", c->control_url);
    t->curl = curl_easy_init();
    if (!t->curl) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    curl_easy_setopt(t->curl, CURLOPT_URL, url);
    curl_easy_setopt(t->curl, CURLOPT_CAINFO, c->ca_file);
    curl_easy_setopt(t->curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(t->curl, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(t->curl, CURLOPT_PROTOCOLS_STR, "https");
    /* HTTP/1.1 in ALPN: an upgrade does not exist in HTTP/2 */
    curl_easy_setopt(t->curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(t->curl, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(t->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)DIAL_TIMEOUT_MS);
    curl_easy_setopt(t->curl, CURLOPT_NOSIGNAL, 1L);
    rc = curl_easy_perform(t->curl);
    if (rc == CURLE_OK)
        rc = curl_easy_getinfo(t->curl, CURLINFO_ACTIVESOCKET, &s);
    if (rc != CURLE_OK || s == CURL_SOCKET_BAD) {
        snprintf(why, whylen, "%s", curl_easy_strerror(rc));
        return -1;
    }
    t->fd = (int)s;
    return 0;
}

/* The host part of control_url, for the Host header. */
static void url_host(const char *url, char *out, size_t cap)
{
    const char *h = url + strlen("https://");
    size_t n = strcspn(h, "/");

    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), h);
}

static int upgrade(const struct worker_conf *c, const struct worker_identity *id,
                   struct tunnel_conn *t, long *status, char *why, size_t whylen)
{
    char req[STATE_SECRET_MAX + 2 * WCONF_STR + 512], head[HEAD_MAX], host[WCONF_STR];
    int64_t until = clock_now_ms() + DIAL_TIMEOUT_MS;
    int n, sent;

    url_host(c->control_url, host, sizeof(host));
    n = snprintf(req, sizeof(req),
                 "GET /v1/worker/tunnel HTTP/1.1\r\nHost: %s\r\nUpgrade: corral-tunnel/1\r\n"
                 "Connection: Upgrade\r\nAuthorization: Bearer %s\r\nX-Worker-Id: %s\r\n"
                 "X-Worker-Secret: %s\r\n\r\n",
                 host, c->join_token, id->worker_id, id->worker_secret);
    sent = n > 0 && (size_t)n < sizeof(req) && send_all(t, req, (size_t)n, until) == 0;
    explicit_bzero(req, sizeof(req));
    if (!sent || read_head(t, head, sizeof(head), until) != 0) {
        snprintf(why, whylen, "no answer to the upgrade within %d ms", DIAL_TIMEOUT_MS);
        return -1;
    }
    if (sscanf(head, "HTTP/1.1 %ld", status) != 1)
        *status = 0;
    if (*status == 101)
        return 0;
    snprintf(why, whylen, "the upgrade was answered %ld", *status);
    return -1;
}

int tunnel_dial(const struct worker_conf *c, const struct worker_identity *id,
                struct tunnel_conn *out, long *status, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    out->fd = -1;
    *status = 0;
    if (connect_tls(c, out, why, whylen) == 0 && upgrade(c, id, out, status, why, whylen) == 0)
        return 0;
    tunnel_hangup(out);
    return -1;
}

void tunnel_hangup(struct tunnel_conn *t)
{
    if (t->curl)
        curl_easy_cleanup(t->curl);
    t->curl = NULL;
    t->fd = -1;
}
