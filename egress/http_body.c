/* http_body.c: RFC 9112 7.1 chunked framing, strictly: hex sizes of at most
 * 15 digits, CRLF only (a bare LF is read differently by different servers),
 * no whitespace after the size, no control bytes in extensions or trailers. */
#include "http_body.h"

#include "url_decode.h"

#define SIZE_DIGITS_MAX 15 /* 2^60: no overflow */

void http_body_start(struct http_body *b, const struct http_req *r)
{
    b->chunked = r->framing == FRAMING_CHUNKED;
    b->digits = 0;
    b->left = r->framing == FRAMING_LENGTH ? r->content_length : 0;
    if (b->chunked)
        b->state = BODY_SIZE;
    else
        b->state = b->left ? BODY_DATA : BODY_DONE;
}

/* A byte a line of an extension or a trailer may hold. */
static bool line_byte(unsigned char c)
{
    return (c >= 0x20 && c != 0x7f) || c == '\t';
}

/* One expected byte moves to `next`; anything else is malformed. */
static enum body_state expect(unsigned char c, unsigned char want, enum body_state next)
{
    return c == want ? next : BODY_BAD;
}

static enum body_state after_size(struct http_body *b)
{
    b->digits = 0;
    return b->left ? BODY_DATA : BODY_TRAILER;
}

static enum body_state size_byte(struct http_body *b, unsigned char c)
{
    int v = hex_digit_value((char)c);
    if (v >= 0 && b->digits < SIZE_DIGITS_MAX) {
        b->left = b->left * 16 + (uint64_t)v;
        b->digits++;
        return BODY_SIZE;
    }
    if (b->digits == 0 || v >= 0)
        return BODY_BAD;
    if (c == ';')
        return BODY_EXT;
    return expect(c, '\r', BODY_SIZE_LF);
}

/* The state after one framing byte c. */
static enum body_state step(struct http_body *b, unsigned char c)
{
    switch (b->state) {
    case BODY_SIZE:
        return size_byte(b, c);
    case BODY_EXT:
        return c == '\r' ? BODY_SIZE_LF : line_byte(c) ? BODY_EXT : BODY_BAD;
    case BODY_SIZE_LF:
        return c == '\n' ? after_size(b) : BODY_BAD;
    case BODY_DATA_CR:
        return expect(c, '\r', BODY_DATA_LF);
    case BODY_DATA_LF:
        return expect(c, '\n', BODY_SIZE);
    case BODY_TRAILER:
        return c == '\r' ? BODY_FINAL_LF : line_byte(c) ? BODY_TRAILER_IN : BODY_BAD;
    case BODY_TRAILER_IN:
        return c == '\r' ? BODY_TRAILER_LF : line_byte(c) ? BODY_TRAILER_IN : BODY_BAD;
    case BODY_TRAILER_LF:
        return expect(c, '\n', BODY_TRAILER);
    case BODY_FINAL_LF:
        return expect(c, '\n', BODY_DONE);
    default:
        return BODY_BAD; /* DATA and DONE never get here */
    }
}

long http_body_feed(struct http_body *b, const char *buf, size_t n)
{
    size_t i = 0;

    while (i < n && b->state != BODY_DONE) {
        uint64_t room = http_body_room(b);
        if (room) {
            uint64_t take = room < n - i ? room : n - i;
            http_body_skip(b, take);
            i += (size_t)take;
            continue;
        }
        enum body_state next = step(b, (unsigned char)buf[i]);
        if (next == BODY_BAD)
            return -1;
        b->state = next;
        i++;
    }
    return (long)i;
}

uint64_t http_body_room(const struct http_body *b)
{
    return b->state == BODY_DATA ? b->left : 0;
}

void http_body_skip(struct http_body *b, uint64_t n)
{
    b->left -= n;
    if (b->left == 0 && b->state == BODY_DATA)
        b->state = b->chunked ? BODY_DATA_CR : BODY_DONE;
}

bool http_body_done(const struct http_body *b)
{
    return b->state == BODY_DONE;
}
