/* Base64 for proto3 JSON bytes fields and for signed-URL signatures. */
#include "base64.h"

#include <stdlib.h>
#include <string.h>

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t encode_into(const unsigned char *data, size_t len, char *out, int pad)
{
    size_t o = 0;
    size_t i;

    for (i = 0; i + 2 < len; i += 3) {
        unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8 | data[i + 2];
        out[o++] = b64_alphabet[v >> 18 & 63];
        out[o++] = b64_alphabet[v >> 12 & 63];
        out[o++] = b64_alphabet[v >> 6 & 63];
        out[o++] = b64_alphabet[v & 63];
    }
    if (i < len) {
        unsigned v = (unsigned)data[i] << 16;
        if (i + 1 < len)
            v |= (unsigned)data[i + 1] << 8;
        out[o++] = b64_alphabet[v >> 18 & 63];
        out[o++] = b64_alphabet[v >> 12 & 63];
        if (i + 1 < len)
            out[o++] = b64_alphabet[v >> 6 & 63];
        else if (pad)
            out[o++] = '=';
        if (pad)
            out[o++] = '=';
    }
    out[o] = '\0';
    return o;
}

char *base64_encode(const unsigned char *data, size_t len)
{
    char *out = malloc((len + 2) / 3 * 4 + 1);

    if (out == NULL)
        return NULL;
    encode_into(data, len, out, 1);
    return out;
}

void base64_encode_nopad(const unsigned char *data, size_t len, char *out)
{
    encode_into(data, len, out, 0);
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

unsigned char *base64_decode(const char *text, size_t text_len, size_t *out_len)
{
    unsigned char *out = malloc(text_len / 4 * 3 + 3);
    unsigned acc = 0;
    int bits = 0;
    size_t o = 0;

    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < text_len; i++) {
        int v;
        if (text[i] == '=')
            break; /* padding ends the data */
        v = b64_value((unsigned char)text[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = acc << 6 | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits & 0xff);
        }
    }
    *out_len = o;
    return out;
}
