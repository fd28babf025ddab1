/* http_serve.h: the listening socket and the accept loop of a small HTTP/1.1
 * server, a thread per connection (http.c reads and writes each request).
 * envd serves its routes with it; corral-interp (interp/) compiles it in
 * for port 49999 (decision 0088). */
#ifndef ENVD_HTTP_SERVE_H
#define ENVD_HTTP_SERVE_H

#include "http.h"

#include <stddef.h>

/* Each request of a connection, in turn; it must answer (a 500 is sent for
 * one that did not). */
typedef void (*http_serve_fn)(struct http_req *r);

/* A socket listening on addr (IPv4 literal) and port. fd, or -1 with why
 * in err. */
int http_listen(const char *addr, int port, char *err, size_t errlen);

/* Accepts on lfd forever, each connection on a thread of its own serving
 * its requests with serve (kept alive up to idle_ms between requests, a
 * peer silent for io_timeout_s is gone). log gets what goes wrong. */
void http_serve_forever(int lfd, http_serve_fn serve, int idle_ms, int io_timeout_s,
                        void (*log)(const char *fmt, ...));

#endif
