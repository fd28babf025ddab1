/*
 * The body is scanned for "\r\n--boundary". To treat the first delimiter like
 * the others, the buffer starts with a virtual CRLF. Content is handed out as
 * soon as it cannot be the start of a delimiter, so a part of any size passes
 * through a fixed buffer.
 */
#include "multipart.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int param_value(const char *header, const char *key, char *out, size_t outsz);

int multipart_init(struct multipart *mp, const char *content_type, mp_source_fn read, void *ctx)
{
    char boundary[72];

    memset(mp, 0, offsetof(struct multipart, buf));
    if (content_type == NULL ||
        param_value(content_type, "boundary", boundary, sizeof(boundary)) <= 0 ||
        boundary[0] == '\0')
        return -1;
    mp->dlen = (size_t)snprintf(mp->delim, sizeof(mp->delim), "\r\n--%s", boundary);
    mp->read = read;
    mp->ctx = ctx;
    memcpy(mp->buf, "\r\n", 2);
    mp->len = 2;
    return 0;
}

/* Ensures at least want unread bytes when the source has them. -1 on source error. */
static int fill(struct multipart *mp, size_t want)
{
    while (mp->len - mp->off < want && !mp->src_eof) {
        if (mp->off > 0) {
            memmove(mp->buf, mp->buf + mp->off, mp->len - mp->off);
            mp->len -= mp->off;
            mp->off = 0;
        }
        if (mp->len == sizeof(mp->buf))
            return 0;
        ssize_t n = mp->read(mp->ctx, mp->buf + mp->len, sizeof(mp->buf) - mp->len);
        if (n < 0)
            return -1;
        if (n == 0)
            mp->src_eof = 1;
        mp->len += (size_t)n;
    }
    return 0;
}

ssize_t multipart_read(struct multipart *mp, void *out, size_t n)
{
    char *start, *hit;
    size_t avail, safe;

    for (;;) {
        if (fill(mp, mp->dlen + 4) < 0)
            return -1;
        start = mp->buf + mp->off;
        avail = mp->len - mp->off;
        hit = memmem(start, avail, mp->delim, mp->dlen);
        if (hit == start)
            return 0; /* at the delimiter: the part is over */
        if (hit != NULL)
            safe = (size_t)(hit - start);
        else if (avail >= mp->dlen)
            safe = avail - (mp->dlen - 1);
        else
            return -1; /* the body ended inside a part */
        if (safe > n)
            safe = n;
        memcpy(out, start, safe);
        mp->off += safe;
        return (ssize_t)safe;
    }
}

/* Copies a header parameter (key=value or key="value") into out. 1 found, 0 not. */
static int param_value(const char *header, const char *key, char *out, size_t outsz)
{
    size_t klen = strlen(key);

    for (const char *p = header; (p = strcasestr(p, key)) != NULL; p += klen) {
        if ((p != header && p[-1] != ';' && p[-1] != ' ' && p[-1] != '\t') || p[klen] != '=')
            continue;
        const char *v = p + klen + 1;
        size_t o = 0;
        if (*v == '"') {
            for (v++; *v != '\0' && *v != '"'; v++) {
                if (*v == '\\' && v[1] != '\0')
                    v++;
                if (o + 1 < outsz)
                    out[o++] = *v;
            }
        } else {
            for (; *v != '\0' && *v != ';' && *v != ' '; v++)
                if (o + 1 < outsz)
                    out[o++] = *v;
        }
        out[o] = '\0';
        return 1;
    }
    return 0;
}

/* Browsers and undici escape '"', CR and LF in file names as %22, %0D, %0A. */
static void unescape_filename(char *s)
{
    char *o = s;

    for (char *p = s; *p != '\0'; p++) {
        if (p[0] == '%' && (strncmp(p + 1, "22", 2) == 0 || strncasecmp(p + 1, "0A", 2) == 0 ||
                            strncasecmp(p + 1, "0D", 2) == 0)) {
            *o++ = p[2] == '2' ? '"' : (p[2] == 'A' || p[2] == 'a') ? '\n' : '\r';
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

static int read_part_headers(struct multipart *mp, char *name, size_t namesz, char *filename,
                             size_t filenamesz)
{
    char line[8192];

    name[0] = filename[0] = '\0';
    for (;;) {
        if (fill(mp, sizeof(line)) < 0)
            return -1;
        char *start = mp->buf + mp->off;
        char *eol = memmem(start, mp->len - mp->off, "\r\n", 2);
        if (eol == NULL || (size_t)(eol - start) >= sizeof(line))
            return -1;
        size_t l = (size_t)(eol - start);
        memcpy(line, start, l);
        line[l] = '\0';
        mp->off += l + 2;
        if (l == 0)
            return 1;
        if (strncasecmp(line, "Content-Disposition:", 20) == 0) {
            param_value(line + 20, "name", name, namesz);
            if (param_value(line + 20, "filename", filename, filenamesz))
                unescape_filename(filename);
        }
    }
}

int multipart_next(struct multipart *mp, char *name, size_t namesz, char *filename,
                   size_t filenamesz)
{
    char skip[8192];
    ssize_t n;

    if (mp->done)
        return 0;
    /* Skip what is left of the current part (or the preamble). */
    while ((n = multipart_read(mp, skip, sizeof(skip))) > 0)
        ;
    if (n < 0 || fill(mp, mp->dlen + 2) < 0 || mp->len - mp->off < mp->dlen + 2)
        return -1;
    mp->off += mp->dlen;
    if (memcmp(mp->buf + mp->off, "--", 2) == 0) {
        mp->done = 1;
        return 0;
    }
    /* Transport padding may follow the boundary before its CRLF. */
    while (mp->off < mp->len && (mp->buf[mp->off] == ' ' || mp->buf[mp->off] == '\t'))
        mp->off++;
    if (fill(mp, 2) < 0 || mp->len - mp->off < 2 || memcmp(mp->buf + mp->off, "\r\n", 2) != 0)
        return -1;
    mp->off += 2;
    return read_part_headers(mp, name, namesz, filename, filenamesz);
}
