/* dataport_head.h: the data port's pure parts (dataport.c does the I/O).
 *
 * A request head reaches the data port from the gateway with three headers
 * of nginx's ngx_http_corral_module: X-Corral-Sandbox (the sandbox id),
 * X-Corral-Port (its port) and X-Corral-Gateway ("<unix seconds>:<hex
 * HMAC-SHA-256 of sandbox:port:seconds under the worker key>"). These
 * functions parse the head, check the signature, write the head that goes on
 * to the sandbox, and the {code, message} answer of a refusal. No I/O, no
 * clock: tests/workerd/unit_dataport.c runs them. */
#ifndef CORRAL_DATAPORT_HEAD_H
#define CORRAL_DATAPORT_HEAD_H

#include <stddef.h>

#define DATAPORT_ID_MAX 64
#define DATAPORT_MAX_AGE 60       /* seconds a gateway signature lives, either way */
#define DATAPORT_FORWARD_EXTRA 32 /* dataport_head_forward adds at most this */

/* What a head says; the values are copies (bounded), the head is not. */
struct dataport_head {
    const char *buf;
    size_t len; /* up to and including the blank line ("\r\n\r\n") */
    char sandbox[DATAPORT_ID_MAX + 1];
    char port[8];
    char gateway[128];
    int n_sandbox, n_port, n_gateway; /* how often each header came */
    /* A volume request of corral-api (decision 0071) names a volume and its
     * workspace instead of a sandbox and port (common/volume_sig.h). */
    char volume[DATAPORT_ID_MAX + 1];
    char workspace[DATAPORT_ID_MAX + 1];
    int n_volume, n_workspace;
    int upgrade;                /* an Upgrade header and "upgrade" in Connection */
    int head_method;            /* HEAD: its response has no body */
    int close;                  /* "close" in Connection: the gateway ends here */
    int n_cl, n_te, te_chunked; /* Content-Length, Transfer-Encoding: how often */
    long long cl;               /* Content-Length, or -1 when malformed */
};

/* Parses the request line and header lines of h->buf (h->len bytes, ending
 * in the blank line) into h; the rest of h must be zero. 0, or -1 when the
 * head is malformed (no request line, a line without a colon, a folded
 * line). */
int dataport_head_parse(struct dataport_head *h);

/* How the request's body is delimited: none, Content-Length or chunked. 0, or
 * -1 with the reason in why (a 400): a malformed or repeated Content-Length,
 * a Transfer-Encoding other than one "chunked", or both. */
struct dataport_body;
int dataport_head_body(const struct dataport_head *h, struct dataport_body *b, const char **why);

/* 0 when h's X-Corral-Gateway is a signature of its sandbox and port (or, for
 * a volume request -- any X-Corral-Volume or X-Corral-Workspace --, of its
 * volume and workspace, and no sandbox or port), at most DATAPORT_MAX_AGE
 * seconds from now (unix seconds), under key or, if that fails, previous
 * (NULL or "": none). Otherwise -1 with the reason in why (a 403), or -2 when
 * key is NULL or "" (this worker is not enrolled yet: a 503, retried). The
 * headers' shape and freshness are checked before the key. */
int dataport_signature_check(const struct dataport_head *h, const char *key, const char *previous,
                             long long now, const char **why);

/* Writes into out (h->len + DATAPORT_FORWARD_EXTRA bytes) the head the
 * sandbox gets: without X-Corral-* headers and, unless it is an upgrade,
 * without Connection and Keep-Alive (the data port keeps the connection to
 * the sandbox whatever the gateway's connection does); a NUL follows it. Its
 * length. */
size_t dataport_head_forward(const struct dataport_head *h, char *out);

/* The whole HTTP answer of a refusal: status line, JSON {"code","message"}
 * (jansson, so any message is escaped; one that is not UTF-8 is replaced by
 * the reason phrase), Retry-After on a 503. malloc'ed, its length in *len;
 * NULL when out of memory. */
char *dataport_error_response(int code, const char *message, size_t *len);
/* The gateway's one "not found" (decision 0033), for a sandbox (a valid id)
 * this worker does not run or that is paused: 502 {"sandboxId", "message":
 * "The sandbox was not found", "code": 502}. */
char *dataport_not_found_response(const char *sbid, size_t *len);

/* 1 when s is a sandbox id the data port accepts: 1 to DATAPORT_ID_MAX of
 * [A-Za-z0-9_-]. */
int dataport_valid_id(const char *s);

/* 1 when s is min to max decimal digits and nothing else. */
int dataport_all_digits(const char *s, size_t min, size_t max);

#endif
