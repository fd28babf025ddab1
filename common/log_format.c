#include "log_format.h"

#include <stdio.h>
#include <string.h>

const char *const log_field_names[LOG_NFIELDS] = {"request_id", "workspace", "sandbox", "worker",
                                                  "tier"};

/* Length of the valid UTF-8 sequence at s, or 0 (overlong forms, surrogates
 * and code points past U+10FFFF are not valid). */
static size_t utf8_len(const unsigned char *s)
{
    size_t n;
    unsigned cp;

    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2, cp = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, cp = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, cp = s[0] & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* The escape of one ASCII byte into esc; its length (0: the byte as it is). */
static size_t ascii_escape(unsigned char c, char esc[8])
{
    static const char shorts[] = {'\b', 'b', '\f', 'f', '\n', 'n', '\r', 'r', '\t', 't'};

    if (c == '"' || c == '\\')
        return (size_t)snprintf(esc, 8, "\\%c", c);
    for (size_t i = 0; i < sizeof(shorts); i += 2)
        if (c == (unsigned char)shorts[i])
            return (size_t)snprintf(esc, 8, "\\%c", shorts[i + 1]);
    if (c < 0x20 || c == 0x7f)
        return (size_t)snprintf(esc, 8, "\\u%04x", c);
    return 0;
}

size_t log_json_escape(char *out, size_t cap, const char *in)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t used = 0;

    if (cap == 0)
        return 0;
    while (*s) {
        char esc[8];
        const char *piece = esc;
        size_t n, step;

        if (*s < 0x80) {
            n = ascii_escape(*s, esc);
            if (n == 0)
                piece = (const char *)s, n = 1;
            step = 1;
        } else if ((step = utf8_len(s)) != 0) {
            piece = (const char *)s, n = step;
        } else {
            piece = "\\ufffd", n = 6, step = 1;
        }
        if (used + n >= cap)
            break;
        memcpy(out + used, piece, n);
        used += n;
        s += step;
    }
    out[used] = '\0';
    return used;
}

/* Appends ,"name":"value" when it fits whole; the length it added. */
static size_t add_field(char *out, size_t cap, const char *name, const char *value)
{
    char esc[256];
    int n;

    log_json_escape(esc, sizeof(esc), value);
    n = snprintf(out, cap, ",\"%s\":\"%s\"", name, esc);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

size_t log_format(char *out, size_t cap, const struct log_line *l)
{
    static const char tail[] = "\"}\n";
    static const char msg_key[] = ",\"msg\":\"";
    /* What the message's key and the end of the line always keep. */
    size_t head_cap = cap - (sizeof(msg_key) - 1) - sizeof(tail);
    char stamp[32];
    struct tm tm;
    size_t used;
    int n;

    gmtime_r(&l->when.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    n = snprintf(out, head_cap, "{\"time\":\"%s.%03ldZ\"", stamp, l->when.tv_nsec / 1000000);
    used = n > 0 && (size_t)n < head_cap ? (size_t)n : 0;
    used += add_field(out + used, head_cap - used, "level", l->level);
    used += add_field(out + used, head_cap - used, "service", l->service);
    n = snprintf(out + used, head_cap - used, ",\"pid\":%d", l->pid);
    used += n > 0 && (size_t)n < head_cap - used ? (size_t)n : 0;
    for (int f = 0; f < LOG_NFIELDS; f++)
        if (l->fields[f] && l->fields[f][0])
            used += add_field(out + used, head_cap - used, log_field_names[f], l->fields[f]);
    /* The message last, cut to what is left: the context is never lost. */
    memcpy(out + used, msg_key, sizeof(msg_key) - 1);
    used += sizeof(msg_key) - 1;
    used += log_json_escape(out + used, cap - used - (sizeof(tail) - 1), l->msg);
    memcpy(out + used, tail, sizeof(tail));
    return used + sizeof(tail) - 1;
}
