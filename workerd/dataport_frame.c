/* dataport_frame.c: message ends for the data port's keep-alive (see
 * dataport_frame.h). */
#include "dataport_frame.h"

#include "url_decode.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define CHUNK_LINE_MAX 4096 /* a size line with its extensions */
#define CHUNK_HEX_MAX 15    /* so that a size fits in 60 bits */
#define TRAILERS_MAX 16384

enum {
    C_SIZE0,    /* the first hex digit of a size */
    C_SIZE,     /* more digits, ';' or CR */
    C_EXT,      /* a chunk extension, up to CR */
    C_SIZE_LF,  /* the LF after a size line */
    C_DATA,     /* left bytes of data */
    C_DATA_CR,  /* the CRLF after the data */
    C_DATA_LF,  /* */
    C_TRAILER0, /* the start of a trailer line, or the final CR */
    C_TRAILER,  /* a trailer line, up to CR */
    C_TRAILER_LF,
    C_FINAL_LF, /* the LF of the last, empty line */
};

void dataport_body_init(struct dataport_body *b, enum dataport_body_kind kind,
                        unsigned long long length)
{
    memset(b, 0, sizeof(*b));
    b->kind = kind;
    b->left = kind == DP_BODY_LENGTH ? length : 0;
    b->st = C_SIZE0;
    b->done = kind == DP_BODY_NONE || (kind == DP_BODY_LENGTH && length == 0);
}

/* A byte of a trailer line. 0, or -1. */
static int trailer_byte(struct dataport_body *b, char c)
{
    if (++b->trailers > TRAILERS_MAX)
        return -1;
    if (c == '\r')
        b->st = C_TRAILER_LF;
    else if ((c != '\t' && (unsigned char)c < 0x20) || c == 0x7f)
        return -1;
    return 0;
}

/* One byte of chunked coding outside chunk data. 0, or -1 when malformed. */
static int chunk_byte(struct dataport_body *b, char c)
{
    switch (b->st) {
    case C_SIZE0:
    case C_SIZE:
        if (hex_digit_value(c) >= 0) {
            if (++b->line > CHUNK_HEX_MAX)
                return -1;
            b->left = b->left * 16 + (unsigned long long)hex_digit_value(c);
            b->st = C_SIZE;
            return 0;
        }
        if (b->st == C_SIZE0)
            return -1;
        b->st = c == ';' ? C_EXT : c == '\r' ? C_SIZE_LF : -1;
        return b->st < 0 ? -1 : 0;
    case C_EXT:
        if (c == '\r')
            b->st = C_SIZE_LF;
        else if ((c != '\t' && (unsigned char)c < 0x20) || c == 0x7f || ++b->line > CHUNK_LINE_MAX)
            return -1;
        return 0;
    case C_SIZE_LF:
        if (c != '\n')
            return -1;
        b->line = 0;
        b->st = b->left > 0 ? C_DATA : C_TRAILER0;
        return 0;
    case C_DATA_CR:
        b->st = C_DATA_LF;
        return c == '\r' ? 0 : -1;
    case C_DATA_LF:
        b->st = C_SIZE0;
        return c == '\n' ? 0 : -1;
    case C_TRAILER0:
        if (c == '\r') {
            b->st = C_FINAL_LF;
            return 0;
        }
        b->st = C_TRAILER;
        return trailer_byte(b, c);
    case C_TRAILER:
        return trailer_byte(b, c);
    case C_TRAILER_LF:
        b->st = C_TRAILER0;
        return c == '\n' ? 0 : -1;
    case C_FINAL_LF:
        if (c != '\n')
            return -1;
        b->done = 1;
        return 0;
    default:
        return -1;
    }
}

static long long feed_chunked(struct dataport_body *b, const char *p, size_t n)
{
    size_t i = 0;

    while (i < n && !b->done) {
        if (b->st == C_DATA) {
            size_t take = b->left < n - i ? (size_t)b->left : n - i;
            i += take;
            b->left -= take;
            if (b->left == 0)
                b->st = C_DATA_CR;
            continue;
        }
        if (chunk_byte(b, p[i++]) != 0)
            return -1;
    }
    return (long long)i;
}

long long dataport_body_feed(struct dataport_body *b, const char *p, size_t n)
{
    if (b->done)
        return 0;
    switch (b->kind) {
    case DP_BODY_LENGTH: {
        size_t take = b->left < n ? (size_t)b->left : n;
        b->left -= take;
        b->done = b->left == 0;
        return (long long)take;
    }
    case DP_BODY_CHUNKED:
        return feed_chunked(b, p, n);
    case DP_BODY_CLOSE:
        return (long long)n;
    default:
        return 0;
    }
}

/* RFC 9110 token characters, which header names are made of. */
static int is_tchar(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* 1 when each line of buf ends in CRLF, and no other CR, LF, NUL or control
 * byte but TAB is there. */
static int lines_clean(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\r') {
            if (i + 1 >= len || buf[i + 1] != '\n')
                return 0;
            i++;
        } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
            return 0;
        }
    }
    return 1;
}

static int has_close(const char *v, size_t n)
{
    for (size_t i = 0; i + 5 <= n; i++)
        if (strncasecmp(v + i, "close", 5) == 0)
            return 1;
    return 0;
}

/* One header line [p, eol) into r. 0, or -1. */
static int resp_header(const char *p, const char *eol, struct dataport_resp *r, int *n_cl,
                       int *n_te, const char **why)
{
    const char *colon = memchr(p, ':', (size_t)(eol - p)), *v, *ve;
    size_t nl;

    if (!colon || colon == p) {
        *why = "a response header line without a name";
        return -1;
    }
    for (const char *q = p; q < colon; q++)
        if (!is_tchar(*q)) {
            *why = "a response header name that is not a token";
            return -1;
        }
    nl = (size_t)(colon - p);
    for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
        ;
    for (ve = eol; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
        ;
    if (nl == 14 && strncasecmp(p, "Content-Length", 14) == 0) {
        long long x = 0;
        if (ve == v || ve - v > 18 || (*n_cl)++ > 0) {
            *why = "a malformed or repeated Content-Length";
            return -1;
        }
        for (const char *q = v; q < ve; q++) {
            if (*q < '0' || *q > '9') {
                *why = "a malformed or repeated Content-Length";
                return -1;
            }
            x = x * 10 + (*q - '0');
        }
        r->cl = x;
    } else if (nl == 17 && strncasecmp(p, "Transfer-Encoding", 17) == 0) {
        if ((*n_te)++ > 0 || ve - v != 7 || strncasecmp(v, "chunked", 7) != 0) {
            *why = "a Transfer-Encoding other than one \"chunked\"";
            return -1;
        }
        r->chunked = 1;
    } else if (nl == 10 && strncasecmp(p, "Connection", 10) == 0 &&
               has_close(v, (size_t)(ve - v))) {
        r->keep = 0;
    }
    return 0;
}

int dataport_resp_parse(const char *buf, size_t len, struct dataport_resp *r, const char **why)
{
    const char *end = buf + len - 2, *p, *eol;
    int n_cl = 0, n_te = 0;

    memset(r, 0, sizeof(*r));
    r->cl = -1;
    if (len < 14 || memcmp(buf + len - 4, "\r\n\r\n", 4) != 0 || !lines_clean(buf, len)) {
        *why = "a response head with a bare CR or LF, or a control byte";
        return -1;
    }
    if (strncmp(buf, "HTTP/1.", 7) != 0 || (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' ||
        buf[9] < '1' || buf[9] > '5' || buf[10] < '0' || buf[10] > '9' || buf[11] < '0' ||
        buf[11] > '9' || (buf[12] != ' ' && buf[12] != '\r')) {
        *why = "a response that is not HTTP/1.x with a status";
        return -1;
    }
    r->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    r->keep = buf[7] == '1';
    eol = memmem(buf, len, "\r\n", 2);
    for (p = eol + 2; p < end; p = eol + 2) {
        eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
        if (p[0] == ' ' || p[0] == '\t') {
            *why = "a folded response header line";
            return -1;
        }
        if (resp_header(p, eol, r, &n_cl, &n_te, why) != 0)
            return -1;
    }
    if (r->chunked && r->cl >= 0) {
        *why = "both Content-Length and Transfer-Encoding";
        return -1;
    }
    return 0;
}

/* RFC 9112 section 6.3: these end at their head. */
static int bodiless(const struct dataport_resp *r, int head_request)
{
    return head_request || r->status == 204 || r->status == 304 || r->status < 200;
}

int dataport_resp_false_body(const struct dataport_resp *r, int head_request)
{
    return bodiless(r, head_request) && (r->chunked || r->cl > 0);
}

void dataport_resp_body(const struct dataport_resp *r, int head_request, struct dataport_body *b)
{
    if (bodiless(r, head_request))
        dataport_body_init(b, DP_BODY_NONE, 0);
    else if (r->chunked)
        dataport_body_init(b, DP_BODY_CHUNKED, 0);
    else if (r->cl >= 0)
        dataport_body_init(b, DP_BODY_LENGTH, (unsigned long long)r->cl);
    else
        dataport_body_init(b, DP_BODY_CLOSE, 0);
}

/* Whether the header line at p (n bytes, its CRLF included) is named name. */
static int line_named(const char *p, size_t n, const char *name)
{
    size_t nl = strlen(name);

    return n > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0;
}

/* A line the gateway does not get: the sandbox's X-Corral-*, a 204's framing. */
static int line_dropped(const char *p, size_t n, int no_content)
{
    return strncasecmp(p, "X-Corral-", 9) == 0 ||
           (no_content &&
            (line_named(p, n, "Content-Length") || line_named(p, n, "Transfer-Encoding")));
}

size_t dataport_resp_forward(const char *head, size_t len, const char *keep, char *out)
{
    const char *p = head, *end = head + len;
    char *o = out;
    int no_content = len > 12 && memcmp(head + 8, " 204", 4) == 0;

    while (p < end) {
        const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
        size_t n = (size_t)(eol - p) + 2;

        if (eol == p) { /* the blank line */
            o += snprintf(o, DATAPORT_KEEP_EXTRA, "%s%.127s%s\r\n", keep ? "X-Corral-Keep: " : "",
                          keep ? keep : "", keep ? "\r\n" : "");
            break;
        }
        if (p == head || !line_dropped(p, n, no_content)) {
            memcpy(o, p, n);
            o += n;
        }
        p += n;
    }
    return (size_t)(o - out);
}

const char *dataport_head_end(const char *buf, size_t len, size_t *seen)
{
    size_t from = *seen > 3 && *seen <= len ? *seen - 3 : 0;
    const char *end = len - from >= 4 ? memmem(buf + from, len - from, "\r\n\r\n", 4) : NULL;

    *seen = end ? 0 : len;
    return end;
}
