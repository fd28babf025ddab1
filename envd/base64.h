/* Standard base64 (proto3 JSON `bytes`); decoding also accepts the URL-safe alphabet. */
#ifndef ENVD_BASE64_H
#define ENVD_BASE64_H

#include <stddef.h>

/* Returns a malloc'ed NUL-terminated string, or NULL on allocation failure. */
char *base64_encode(const unsigned char *data, size_t len);

/* Returns a malloc'ed buffer and its length in *out_len, or NULL if malformed. */
unsigned char *base64_decode(const char *text, size_t text_len, size_t *out_len);

/* Encodes without '=' padding into out (which must hold 4*ceil(len/3)+1 bytes). */
void base64_encode_nopad(const unsigned char *data, size_t len, char *out);

#endif
