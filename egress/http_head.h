/* http_head.h: the one request head a client sends its proxy: CONNECT
 * host:port, or an absolute-form http:// request. Pure; refuses anything
 * ambiguous (bare LF, obs-fold, userinfo, control bytes) rather than guessing
 * how the upstream server would read it. */
#ifndef CORRAL_EGRESS_HTTP_HEAD_H
#define CORRAL_EGRESS_HTTP_HEAD_H

#include "hostname.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 16384
#define HTTP_METHOD_MAX 20

enum head_scan { HEAD_PARTIAL, HEAD_COMPLETE, HEAD_BAD };

/* Looks for the blank line ending the head in buf[0..len); on
 * HEAD_COMPLETE *head_len is the head's length including it. HEAD_BAD as soon
 * as a byte no head may hold arrives, so garbage is answered at once. */
enum head_scan http_head_scan(const char *buf, size_t len, size_t *head_len);

/* HTTP_ORIGIN: a request inside an intercepted tunnel (http_head_parse_inner). */
enum http_kind { HTTP_CONNECT, HTTP_ABSOLUTE, HTTP_ORIGIN };

/* How the request's body ends (RFC 9112 6.3): where the next request would
 * start, which the proxy must know to forward this request and no other. */
enum http_framing { FRAMING_NONE, FRAMING_LENGTH, FRAMING_CHUNKED };

struct http_req {
    enum http_kind kind;
    char method[HTTP_METHOD_MAX + 1];
    char host[HOSTNAME_MAX + 1]; /* as sent, without [] */
    bool bracketed;              /* [v6] */
    unsigned port;
    size_t path_off, path_len; /* ABSOLUTE: the target after the authority */
    char version[9];           /* HTTP/1.0 or HTTP/1.1 */
    size_t headers_off;        /* first header line */
    enum http_framing framing;
    uint64_t content_length; /* FRAMING_LENGTH */
    bool upgrade;            /* an Upgrade header: the bytes after it may not be HTTP */
};

/* head is a HEAD_COMPLETE head. 0, or -1 with *why a short reason. Framing
 * two parsers could read differently (Content-Length with Transfer-Encoding,
 * two of either, a coding other than chunked) is refused: that is how a
 * request is smuggled inside another's body. */
int http_head_parse(const char *head, size_t head_len, struct http_req *r, const char **why);

/* As http_head_parse, for a request inside an intercepted tunnel: an
 * origin-form target (path_off/path_len), no host or port. */
int http_head_parse_inner(const char *head, size_t head_len, struct http_req *r, const char **why);

/* The origin-form request for the upstream server: the request line with the
 * path only, Host from the request target (RFC 9112 3.2.2: a proxy replaces
 * it, so Host cannot name a site other than the one the policy judged), the
 * headers minus hop-by-hop and proxy ones, then Connection: close. Returns
 * the length written to out, or -1 if cap is too small. */
long http_head_rewrite(const char *head, size_t head_len, const struct http_req *r, char *out,
                       size_t cap);

#endif
