#include "upgrade.h"

#include "token.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int upgrade_head_done(const char *head, size_t len)
{
    return len >= 4 && memcmp(head + len - 4, "\r\n\r\n", 4) == 0;
}

/* An id as corral-api makes them (token_is_id), in n bytes. */
static int id_ok(const char *s, size_t n, int empty_ok)
{
    char id[33];

    if (n == 0)
        return empty_ok;
    if (n >= sizeof(id))
        return 0;
    memcpy(id, s, n);
    id[n] = '\0';
    return token_is_id(id);
}

/* The value of header name in the line [p, end), trimmed; NULL if the line
 * is another header. */
static const char *header_value(const char *p, const char *end, const char *name, size_t *vlen)
{
    size_t n = strlen(name);

    if ((size_t)(end - p) <= n || strncasecmp(p, name, n) != 0 || p[n] != ':')
        return NULL;
    p += n + 1;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *vlen = (size_t)(end - p);
    return p;
}

struct seen {
    int upgrade, worker, pool;
};

/* One header line: the three that matter, each at most once. -1 malformed. */
static int header_line(const char *p, const char *end, struct upgrade_req *out, struct seen *s)
{
    const char *v;
    size_t n;

    if ((v = header_value(p, end, "Upgrade", &n)))
        return s->upgrade++ || n != strlen(UPGRADE_PROTOCOL) ||
                       strncasecmp(v, UPGRADE_PROTOCOL, n) != 0
                   ? -1
                   : 0;
    if ((v = header_value(p, end, "X-Corral-Tunnel-Worker", &n))) {
        if (s->worker++ || !id_ok(v, n, 0))
            return -1;
        memcpy(out->worker, v, n);
        out->worker[n] = '\0';
        return 0;
    }
    if ((v = header_value(p, end, "X-Corral-Tunnel-Pool", &n))) {
        if (s->pool++)
            return -1;
        if (n == strlen(UPGRADE_FLEET_POOL) && memcmp(v, UPGRADE_FLEET_POOL, n) == 0)
            return 0; /* out->pool stays "" */
        if (!id_ok(v, n, 0))
            return -1;
        memcpy(out->pool, v, n);
        out->pool[n] = '\0';
    }
    return 0;
}

int upgrade_parse(const char *head, size_t len, struct upgrade_req *out, char *why, size_t whylen)
{
    static const char line1[] = "GET /v1/worker/tunnel HTTP/1.1\r\n";
    const char *p = head, *end = head + len;
    struct seen s = {0, 0, 0};

    memset(out, 0, sizeof(*out));
    if (len > UPGRADE_HEAD_MAX || !upgrade_head_done(head, len) || memchr(head, '\0', len) ||
        len < sizeof(line1) - 1 || memcmp(head, line1, sizeof(line1) - 1) != 0) {
        snprintf(why, whylen, "not GET /v1/worker/tunnel HTTP/1.1");
        return 400;
    }
    for (p += sizeof(line1) - 1; p < end - 2;) {
        const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);

        if (header_line(p, eol, out, &s) != 0) {
            snprintf(why, whylen, "a malformed or repeated Upgrade or X-Corral-Tunnel-* header");
            return 400;
        }
        p = eol + 2;
    }
    if (!s.upgrade || !s.worker || !s.pool) {
        snprintf(why, whylen,
                 "Upgrade: " UPGRADE_PROTOCOL " and the worker nginx authenticated are required");
        return 400;
    }
    return 0;
}
