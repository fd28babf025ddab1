#include "http_head.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum head_scan http_head_scan(const char *buf, size_t len, size_t *head_len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\n') {
            if (i == 0 || buf[i - 1] != '\r')
                return HEAD_BAD;
            if (i >= 3 && buf[i - 2] == '\n') {
                *head_len = i + 1;
                return HEAD_COMPLETE;
            }
        } else if (c == '\r') {
            if (i + 1 < len && buf[i + 1] != '\n')
                return HEAD_BAD;
        } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
            return HEAD_BAD;
        }
    }
    return HEAD_PARTIAL;
}

/* Heads are not NUL-terminated: every search stays inside [0, end). */
static const char *find_crlf(const char *p, const char *end)
{
    const char *r = memmem(p, (size_t)(end - p), "\r\n", 2);
    return r ? r : end;
}

static int refuse(const char **why, const char *reason)
{
    *why = reason;
    return -1;
}

static int is_tchar(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* host[:port] or [v6][:port]; port required for CONNECT. */
static int authority_parse(const char *a, size_t n, bool need_port, struct http_req *r)
{
    const char *host = a, *colon = NULL;
    size_t hlen;

    r->bracketed = n > 0 && a[0] == '[';
    if (r->bracketed) {
        const char *close = memchr(a, ']', n);
        if (!close)
            return -1;
        host = a + 1;
        hlen = (size_t)(close - host);
        if (close + 1 < a + n) {
            if (close[1] != ':')
                return -1;
            colon = close + 1;
        }
    } else {
        colon = memchr(a, ':', n);
        hlen = colon ? (size_t)(colon - a) : n;
    }
    if (hlen == 0 || hlen > HOSTNAME_MAX)
        return -1;
    for (size_t i = 0; i < hlen; i++) {
        unsigned char c = (unsigned char)host[i];
        bool ok = r->bracketed ? (isxdigit(c) || c == ':' || c == '.')
                               : (isalnum(c) || c == '-' || c == '_' || c == '.');
        if (!ok)
            return -1;
    }
    if (r->bracketed && !memchr(host, ':', hlen))
        return -1;
    memcpy(r->host, host, hlen);
    r->host[hlen] = '\0';
    if (!colon)
        return need_port ? -1 : (r->port = 80, 0);
    const char *p = colon + 1, *end = a + n;
    if (p == end || end - p > 5)
        return -1;
    unsigned port = 0;
    for (; p < end; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        port = port * 10 + (unsigned)(*p - '0');
    }
    if (port == 0 || port > 65535)
        return -1;
    r->port = port;
    return 0;
}

/* A request inside an intercepted tunnel: origin-form ("/path", or "*" for
 * OPTIONS), for the server the tunnel already reaches. Absolute-form could
 * name another host, so it is refused rather than interpreted. */
static int origin_parse(const char *t, size_t n, struct http_req *r, const char **why)
{
    if (strcmp(r->method, "CONNECT") == 0)
        return refuse(why, "CONNECT inside an intercepted tunnel");
    if (t[0] != '/' && !(n == 1 && t[0] == '*' && strcmp(r->method, "OPTIONS") == 0))
        return refuse(why, "want an origin-form request target (/path)");
    r->path_len = n;
    return 0;
}

static int target_parse(const char *t, size_t n, struct http_req *r, const char **why)
{
    if (r->kind == HTTP_ORIGIN)
        return origin_parse(t, n, r, why);
    if (strcmp(r->method, "CONNECT") == 0) {
        r->kind = HTTP_CONNECT;
        if (authority_parse(t, n, true, r) != 0)
            return refuse(why, "CONNECT needs host:port");
        return 0;
    }
    r->kind = HTTP_ABSOLUTE;
    if (n >= 8 && strncasecmp(t, "https://", 8) == 0)
        return refuse(why, "https:// is not proxied in absolute form; use CONNECT");
    if (n < 7 || strncasecmp(t, "http://", 7) != 0)
        return refuse(why, "not a proxy request; send absolute-form http:// or CONNECT");
    size_t a = 7, e = a;
    while (e < n && t[e] != '/' && t[e] != '?' && t[e] != '#')
        e++;
    if (memchr(t + a, '@', e - a) || authority_parse(t + a, e - a, false, r) != 0)
        return refuse(why, "bad host in request target");
    r->path_len = n - e;
    return 0;
}

static int request_line_parse(const char *head, size_t eol, struct http_req *r, const char **why)
{
    const char *sp1 = memchr(head, ' ', eol);
    if (!sp1 || sp1 == head || sp1 - head > HTTP_METHOD_MAX)
        return refuse(why, "malformed request line");
    for (const char *p = head; p < sp1; p++)
        if (*p < 'A' || *p > 'Z')
            return refuse(why, "malformed request line");
    memcpy(r->method, head, (size_t)(sp1 - head));
    r->method[sp1 - head] = '\0';
    const char *t = sp1 + 1, *sp2 = memchr(t, ' ', eol - (size_t)(t - head));
    if (!sp2 || sp2 == t || head + eol - (sp2 + 1) != 8)
        return refuse(why, "malformed request line");
    if (memcmp(sp2 + 1, "HTTP/1.1", 8) != 0 && memcmp(sp2 + 1, "HTTP/1.0", 8) != 0)
        return refuse(why, "only HTTP/1.0 and HTTP/1.1");
    memcpy(r->version, sp2 + 1, 8);
    r->version[8] = '\0';
    for (const char *p = t; p < sp2; p++)
        if ((unsigned char)*p <= ' ')
            return refuse(why, "malformed request line");
    if (target_parse(t, (size_t)(sp2 - t), r, why) != 0)
        return -1;
    r->path_off = (size_t)(sp2 - head) - r->path_len;
    return 0;
}

static bool name_is(const char *line, size_t name_len, const char *name)
{
    return strlen(name) == name_len && strncasecmp(line, name, name_len) == 0;
}

/* The value without the optional whitespace around it. */
static void value_trim(const char **v, const char **end)
{
    while (*v < *end && (**v == ' ' || **v == '\t'))
        (*v)++;
    while (*end > *v && ((*end)[-1] == ' ' || (*end)[-1] == '\t'))
        (*end)--;
}

/* 1 to 18 digits: nothing else (no list, no sign), and no overflow. */
static int length_parse(const char *v, const char *end, uint64_t *out)
{
    if (end == v || end - v > 18)
        return -1;
    *out = 0;
    for (; v < end; v++) {
        if (!isdigit((unsigned char)*v))
            return -1;
        *out = *out * 10 + (uint64_t)(*v - '0');
    }
    return 0;
}

/* One framing header line; a second of either kind is refused here. */
static int framing_line(const char *line, size_t name_len, const char *eol, struct http_req *r,
                        const char **why)
{
    const char *v = line + name_len + 1, *end = eol;
    bool cl = name_is(line, name_len, "content-length");

    if (name_is(line, name_len, "upgrade"))
        r->upgrade = true;
    if (!cl && !name_is(line, name_len, "transfer-encoding"))
        return 0;
    if (r->framing != FRAMING_NONE)
        return refuse(why, "ambiguous framing: Content-Length or Transfer-Encoding twice or both");
    value_trim(&v, &end);
    if (cl) {
        r->framing = FRAMING_LENGTH;
        return length_parse(v, end, &r->content_length) == 0 ? 0
                                                             : refuse(why, "bad Content-Length");
    }
    r->framing = FRAMING_CHUNKED;
    if (end - v != 7 || strncasecmp(v, "chunked", 7) != 0)
        return refuse(why, "Transfer-Encoding other than chunked");
    if (strcmp(r->version, "HTTP/1.0") == 0)
        return refuse(why, "Transfer-Encoding in an HTTP/1.0 request");
    return 0;
}

/* Each line is "name:value" with a token name: no obs-fold, no space before
 * the colon (a classic request-smuggling disagreement). */
static int headers_check(const char *head, size_t off, size_t head_len, struct http_req *r,
                         const char **why)
{
    while (off < head_len - 2) {
        const char *line = head + off, *eol = find_crlf(line, head + head_len);
        const char *p = line;
        while (p < eol && is_tchar((unsigned char)*p))
            p++;
        if (p == line || p == eol || *p != ':')
            return refuse(why, "malformed header");
        if (framing_line(line, (size_t)(p - line), eol, r, why) != 0)
            return -1;
        off = (size_t)(eol - head) + 2;
    }
    return 0;
}

static int parse(const char *head, size_t head_len, struct http_req *r, const char **why,
                 enum http_kind kind)
{
    size_t scanned;

    memset(r, 0, sizeof(*r));
    r->kind = kind;
    *why = "malformed request";
    if (http_head_scan(head, head_len, &scanned) != HEAD_COMPLETE || scanned != head_len)
        return -1;
    const char *eol = find_crlf(head, head + head_len);
    if (eol == head)
        return -1;
    if (request_line_parse(head, (size_t)(eol - head), r, why) != 0)
        return -1;
    r->headers_off = (size_t)(eol - head) + 2;
    return headers_check(head, r->headers_off, head_len, r, why);
}

int http_head_parse(const char *head, size_t head_len, struct http_req *r, const char **why)
{
    return parse(head, head_len, r, why, HTTP_ABSOLUTE);
}

int http_head_parse_inner(const char *head, size_t head_len, struct http_req *r, const char **why)
{
    return parse(head, head_len, r, why, HTTP_ORIGIN);
}

static bool header_dropped(const char *line, size_t name_len)
{
    static const char *const drop[] = {"proxy-connection", "proxy-authorization", "connection",
                                       "keep-alive", "host"};
    for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
        if (name_is(line, name_len, drop[i]))
            return true;
    return false;
}

static bool put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len + n > cap)
        return false;
    memcpy(out + *len, s, n);
    *len += n;
    return true;
}

static bool put_request_line(const char *head, const struct http_req *r, char *out, size_t cap,
                             size_t *len)
{
    char tmp[HOSTNAME_MAX + 64];
    const char *path = head + r->path_off;
    bool slash = r->path_len == 0 || path[0] != '/';
    int n = snprintf(tmp, sizeof(tmp), "%s %s", r->method, slash ? "/" : "");
    if (!put(out, cap, len, tmp, (size_t)n) || !put(out, cap, len, path, r->path_len))
        return false;
    n = snprintf(tmp, sizeof(tmp), " %s\r\nHost: %s%s%s", r->version, r->bracketed ? "[" : "",
                 r->host, r->bracketed ? "]" : "");
    if (!put(out, cap, len, tmp, (size_t)n))
        return false;
    n = r->port == 80 ? 0 : snprintf(tmp, sizeof(tmp), ":%u", r->port);
    return put(out, cap, len, tmp, (size_t)n) && put(out, cap, len, "\r\n", 2);
}

long http_head_rewrite(const char *head, size_t head_len, const struct http_req *r, char *out,
                       size_t cap)
{
    size_t len = 0, off = r->headers_off;

    if (!put_request_line(head, r, out, cap, &len))
        return -1;
    while (off < head_len - 2) {
        const char *line = head + off, *eol = find_crlf(line, head + head_len);
        size_t name_len = (size_t)((const char *)memchr(line, ':', (size_t)(eol - line)) - line);
        if (!header_dropped(line, name_len) && !put(out, cap, &len, line, (size_t)(eol - line) + 2))
            return -1;
        off = (size_t)(eol - head) + 2;
    }
    static const char tail[] = "Connection: close\r\n\r\n";
    if (!put(out, cap, &len, tail, sizeof(tail) - 1))
        return -1;
    return (long)len;
}
