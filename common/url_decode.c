#include "url_decode.h"

int hex_digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int decode(const char *s, size_t n, char *out, size_t outlen, int plus_is_space)
{
    size_t o = 0;

    if (outlen == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            int hi = i + 2 < n ? hex_digit_value(s[i + 1]) : -1;
            int lo = hi >= 0 ? hex_digit_value(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return -1;
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        if (o + 1 >= outlen)
            return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

int url_decode(const char *s, size_t n, char *out, size_t outlen)
{
    return decode(s, n, out, outlen, 1);
}

int url_decode_path(const char *s, size_t n, char *out, size_t outlen)
{
    return decode(s, n, out, outlen, 0);
}
