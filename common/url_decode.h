/* url_decode.h: percent-decoding, one implementation for corral-api's query
 * strings and envd's request targets (envd, a static binary, compiles
 * url_decode.c in: envd/build.mk). A malformed escape ("%2", "%zz") is
 * refused rather than passed through, so that no two readers of one URL can
 * disagree on what it names. Decoding in place (out == s) is safe: the output
 * never runs ahead of the input. */
#ifndef CORRAL_URL_DECODE_H
#define CORRAL_URL_DECODE_H

#include <stddef.h>

/* A query component ('+' is a space) from [s, s+n) into out, at most
 * outlen-1 bytes and a NUL. 0, or -1 if malformed or too long. */
int url_decode(const char *s, size_t n, char *out, size_t outlen);

/* The same for a path, where '+' is itself. */
int url_decode_path(const char *s, size_t n, char *out, size_t outlen);

/* The value of one hex digit (either case), or -1. */
int hex_digit_value(char c);

#endif
