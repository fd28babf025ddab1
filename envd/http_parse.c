/*
 * Request heads and chunk-size lines (http_parse.h). Everything is parsed in
 * place in r->head: names, values, the method and the path point into it.
 */
#include "http_parse.h"
#include "url_decode.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t http_head_length(const char *p, size_t n)
{
    const char *end = n >= 4 ? memmem(p, n, "\r\n\r\n", 4) : NULL;

    return end ? (size_t)(end - p) + 4 : 0;
}

static int parse_request_line(struct http_req *r, char *line)
{
    char *sp1 = strchr(line, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    char *target, *q;
    static char empty[] = "";

    if (sp1 == NULL || sp2 == NULL || strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
        return -1;
    *sp1 = '\0';
    *sp2 = '\0';
    r->method = line;
    target = sp1 + 1;
    r->keep_alive = strcmp(sp2 + 1, "HTTP/1.0") != 0;
    q = strchr(target, '?');
    r->query = empty;
    if (q != NULL) {
        *q = '\0';
        r->query = q + 1;
    }
    /* Decoding in place is safe: the decoded path is never longer. */
    if (url_decode_path(target, strlen(target), target, strlen(target) + 1) < 0)
        return -1;
    r->path = target;
    return 0;
}

static int parse_headers(struct http_req *r, char *p)
{
    while (*p != '\0') {
        char *eol = strstr(p, "\r\n");
        char *colon;
        if (eol == NULL)
            return -1;
        *eol = '\0';
        colon = strchr(p, ':');
        if (colon == NULL || r->nhdrs == HTTP_MAX_HEADERS)
            return -1;
        *colon = '\0';
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        for (char *e = colon + strlen(colon); e > colon && (e[-1] == ' ' || e[-1] == '\t');)
            *--e = '\0';
        r->hdrs[r->nhdrs].name = p;
        r->hdrs[r->nhdrs].value = colon;
        r->nhdrs++;
        p = eol + 2;
    }
    return 0;
}

static int setup_body(struct http_req *r)
{
    const char *te = http_header(r, "Transfer-Encoding");
    const char *cl = http_header(r, "Content-Length");
    const char *conn = http_header(r, "Connection");

    if (conn != NULL && strcasecmp(conn, "close") == 0)
        r->keep_alive = 0;
    if (conn != NULL && strcasecmp(conn, "keep-alive") == 0)
        r->keep_alive = 1;
    r->body_mode = BODY_NONE;
    r->body_done = 1;
    if (te != NULL && strcasestr(te, "chunked") != NULL) {
        r->body_mode = BODY_CHUNKED;
        r->body_left = -1; /* no chunk size read yet */
        r->body_done = 0;
    } else if (cl != NULL) {
        char *end;
        long long v = strtoll(cl, &end, 10);
        if (*end != '\0' || v < 0)
            return -1;
        r->body_mode = BODY_LENGTH;
        r->body_left = v;
        r->body_done = v == 0;
    }
    return 0;
}

enum http_head_status http_parse_head(struct http_req *r, const char *p, size_t head_len)
{
    struct http_conn *c = r->c;
    char *eol;

    memset(r, 0, offsetof(struct http_req, head));
    r->c = c;
    if (head_len > HTTP_HEAD_MAX)
        return HTTP_HEAD_TOO_LONG;
    if (head_len < 4)
        return HTTP_HEAD_MALFORMED; /* not a head http_head_length found */
    /* The head is parsed as C strings: a NUL would end it early, and a
     * Content-Length after it would go unseen (request smuggling). */
    if (memchr(p, '\0', head_len) != NULL)
        return HTTP_HEAD_MALFORMED;
    memcpy(r->head, p, head_len);
    r->head[head_len - 2] = '\0'; /* keep the last header's CRLF, drop the blank line */
    eol = strstr(r->head, "\r\n");
    if (eol == NULL)
        return HTTP_HEAD_MALFORMED;
    *eol = '\0';
    if (parse_request_line(r, r->head) < 0 || parse_headers(r, eol + 2) < 0 || setup_body(r) < 0)
        return HTTP_HEAD_MALFORMED;
    return HTTP_HEAD_OK;
}

int http_chunk_size(const char *line, long long *size)
{
    char *end;
    long long v = strtoll(line, &end, 16);

    if (end == line || v < 0)
        return -1;
    *size = v;
    return 0;
}

const char *http_header(const struct http_req *r, const char *name)
{
    for (int i = 0; i < r->nhdrs; i++)
        if (strcasecmp(r->hdrs[i].name, name) == 0)
            return r->hdrs[i].value;
    return NULL;
}

int http_query_param(const struct http_req *r, const char *name, char *out, size_t outsz)
{
    size_t nlen = strlen(name);
    const char *p = r->query;

    while (*p != '\0') {
        const char *amp = strchr(p, '&');
        size_t plen = amp ? (size_t)(amp - p) : strlen(p);
        if (plen >= nlen && strncmp(p, name, nlen) == 0 && (plen == nlen || p[nlen] == '=')) {
            const char *v = plen == nlen ? p + plen : p + nlen + 1;
            size_t vlen = plen == nlen ? 0 : plen - nlen - 1;
            return url_decode(v, vlen, out, outsz) < 0 ? -1 : 1;
        }
        p += plen;
        if (*p == '&')
            p++;
    }
    return 0;
}
