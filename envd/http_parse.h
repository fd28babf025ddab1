/*
 * The pure half of envd's HTTP/1.1 server (http.c does the reading and
 * writing): where a request head ends, the head parsed in place (request
 * line, headers, the body's framing, keep-alive), chunk-size lines. No I/O,
 * so tests/envd/unit_http.c checks each rule on its own. http_header and
 * http_query_param (declared in http.h) live here too.
 */
#ifndef ENVD_HTTP_PARSE_H
#define ENVD_HTTP_PARSE_H

#include "http.h"

#include <stddef.h>

enum http_head_status {
    HTTP_HEAD_OK = 0,
    HTTP_HEAD_MALFORMED = -1, /* answered 400, then the connection closes */
    HTTP_HEAD_TOO_LONG = -2,  /* over HTTP_HEAD_MAX: the connection closes, no answer */
};

/* Bytes of the head at the start of p[0..n), its blank line included; 0
 * while no blank line has come. */
size_t http_head_length(const char *p, size_t n);

/* The head p[0..head_len) (head_len from http_head_length) copied into
 * r->head and parsed there; every parsed field of r is reset first (r->c
 * is kept). A NUL byte anywhere in the head makes it malformed. */
enum http_head_status http_parse_head(struct http_req *r, const char *p, size_t head_len);

/* A chunk-size line without its CRLF ("1a", "1a;ext=x"): 0 with *size, or
 * -1 when it starts with no hex digit or is negative. */
int http_chunk_size(const char *line, long long *size);

#endif
