/* token_parse.h: envd's token line to corral-interp (token_parse.c). */
#ifndef CORRAL_INTERP_TOKEN_PARSE_H
#define CORRAL_INTERP_TOKEN_PARSE_H

#define TOKEN_DIGEST_LEN 32

/* 1 a digest (in digest), 0 "-" (no token: nothing to check), -1 neither. */
int token_parse_line(const char *line, unsigned char digest[TOKEN_DIGEST_LEN]);

#endif
