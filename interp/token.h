/* token.h: the access token check of POST /execute (decision 0088). envd
 * holds the sandbox's access token; corral-interp is given its SHA-256 only
 * (token_parse.h), and compares the digest of X-Access-Token to it. */
#ifndef CORRAL_INTERP_TOKEN_H
#define CORRAL_INTERP_TOKEN_H

#define TOKEN_PIPE_MAX (1 << 20)

/* Reads what envd hands over on fd, to its end (a warm sandbox's only once
 * claimed), and closes it: the token line, then in *rest (NULL when none;
 * the caller frees) the claim's env vars, a JSON object. 0, or -1
 * (unreadable or not a token line: the server must not serve, since it
 * cannot tell who may). */
int token_load(int fd, char **rest);

/* 1 when the sandbox has no token or header is it; else 0. */
int token_ok(const char *header);

#endif
