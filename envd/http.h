/*
 * A small HTTP/1.1 server side: request heads, bodies (Content-Length or
 * chunked), responses with a length or chunked. Blocking sockets, one thread
 * per connection; nothing here is shared between connections.
 */
#ifndef ENVD_HTTP_H
#define ENVD_HTTP_H

#include <stddef.h>
#include <sys/types.h>

#define HTTP_BUF_SIZE (64 * 1024)
#define HTTP_HEAD_MAX (32 * 1024)
#define HTTP_MAX_HEADERS 64

struct http_conn {
    int fd;
    size_t len; /* bytes buffered in buf */
    size_t off; /* bytes of buf already consumed */
    char buf[HTTP_BUF_SIZE];
};

struct http_header {
    const char *name;
    const char *value;
};

enum http_body_mode { BODY_NONE, BODY_LENGTH, BODY_CHUNKED };

struct http_req {
    struct http_conn *c;
    const char *method;
    const char *path;  /* percent-decoded, without the query */
    const char *query; /* raw query string ("" when absent) */
    struct http_header hdrs[HTTP_MAX_HEADERS];
    int nhdrs;
    int keep_alive;
    enum http_body_mode body_mode;
    long long body_left; /* Content-Length left, or current chunk left */
    int body_done;
    int body_error;
    int head_sent;
    int chunked_resp;
    char head[HTTP_HEAD_MAX + 1];
};

/* Reads the next request head. 1: a request; 0: peer closed or idle timeout; -1: malformed
 * (a 400 was sent). */
int http_read_request(struct http_conn *c, struct http_req *r, int idle_timeout_ms);

/* The first header of that name (any case), or NULL. These two are pure: http_parse.c. */
const char *http_header(const struct http_req *r, const char *name);

/* Copies the decoded value of query parameter name. 1 found, 0 absent, -1 too long. */
int http_query_param(const struct http_req *r, const char *name, char *out, size_t outsz);

/* Request body. http_body_read returns bytes read, 0 at the end, -1 on error. */
ssize_t http_body_read(struct http_req *r, void *buf, size_t n);
/* Reads the whole body (NUL-terminated) up to max bytes. -1 on error, -2 when too large. */
int http_body_read_all(struct http_req *r, char **out, size_t *len, size_t max);
/* Discards what is left of the body; -1 if it could not (the connection must close). */
int http_body_drain(struct http_req *r, long long max);

int http_send_all(int fd, const void *p, size_t n);
/* Sends the status line and headers; content_length < 0 means chunked. extra: more
 * header lines, each ending in CRLF, or NULL. */
int http_send_head(struct http_req *r, int status, const char *content_type,
                   long long content_length, const char *extra);
int http_send_chunk(struct http_req *r, const void *p, size_t n);
int http_end_chunks(struct http_req *r);
int http_send_body(struct http_req *r, int status, const char *content_type, const char *body,
                   size_t n);
/* The E2B error shape for plain HTTP routes: {"code": status, "message": "..."}. */
int http_send_error(struct http_req *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
