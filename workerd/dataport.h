/* dataport.h: the worker's data port, where the gateway (nginx with
 * ngx_http_corral_module) sends sandbox traffic.
 *
 * Connections are kept, both from the gateway and to each sandbox port. Each
 * request's head is parsed (bounded), its X-Corral-Gateway signature checked
 * (HMAC-SHA-256 under the worker key, at most 60 s old, compared in constant
 * time) -- per request, as one gateway connection carries requests for many
 * sandboxes -- and the X-Corral-* headers removed; the head goes to a kept or
 * new connection to that sandbox's port, and exactly the request's body and
 * then exactly its response are copied, without buffering them (uploads,
 * downloads, server streams); an upgrade becomes a tunnel to that one port.
 * One event loop thread serves every connection (decision 0050).
 *
 * Errors are JSON {"code":N,"message":"..."}: 403 bad or stale signature,
 * 404 sandbox unknown on this worker, 502 container port refused (or not
 * allowed: the same answer),
 * 400/431 malformed or oversized head, 503 too many connections.
 * See docs/data-plane.md. */
#ifndef CORRAL_DATAPORT_H
#define CORRAL_DATAPORT_H

#include <stddef.h>
#include <stdint.h>

struct dataport_head;

struct dataport_hooks {
    void *ud;
    /* Copies the current worker key (the handshake's data_key, a string)
     * into out; 0, or -1 when there is none yet (every request is then 403).
     * Called on every request, from the data port's threads, so a key that
     * changes at re-enrolment takes effect at once. */
    int (*worker_key)(void *ud, char *out, size_t len);
    /* Optional: the key before the last re-enrolment, while gateways may still
     * sign with it (their route cache); 0 with it in out, -1 when none. */
    int (*previous_key)(void *ud, char *out, size_t len);
    /* Writes the IP address of sandbox_id's container into ip_out; 0, or -1
     * when this worker does not run that sandbox. May block (it can ask
     * dockerd): called on a thread of its own, never the event loop's. */
    int (*resolve)(void *ud, const char *sandbox_id, char *ip_out, size_t len);
    /* Optional: the same from what is already known, without blocking (the
     * event loop calls it first); 0, or -1 when resolve must be asked. */
    int (*resolve_cached)(void *ud, const char *sandbox_id, char *ip_out, size_t len);
    /* Optional: 1 when the data port may connect to port of sandbox_id, 0
     * when not; then the request gets the answer of a port nothing listens
     * on, and nothing is connected to (agent mode's walls, decision 0062).
     * NULL: every port. Called on the event loop: must not block. */
    int (*port_allowed)(void *ud, const char *sandbox_id, unsigned port);
    /* 1: connections to a sandbox come from the sandbox's own address (bound
     * before the connect). On an agent's loopback the kernel would pick
     * 127.0.0.1, which services of the machine take for a local caller. */
    int from_sandbox_addr;
    /* Optional: takes a volume request of corral-api (X-Corral-Volume, its
     * signature checked: decision 0071) off the event loop, whose file I/O
     * would block it. fd is the connection, non-blocking and out of the
     * loop: the hook's now, to answer and close; h its parsed head and in
     * (len bytes) what was read of it so far, the head and what followed,
     * both valid only during the call. Called on the event loop: must not
     * block. NULL: volume requests are answered 404. */
    void (*volume)(void *ud, int fd, const struct dataport_head *h, const char *in, size_t len);
};

/* Binds listen_addr ("host:port", "[v6addr]:port" or ":port") and serves it
 * from a thread of its own. The hooks are copied. 0 once listening, or -1
 * (logged) when the address cannot be used. */
int dataport_start(const char *listen_addr, const struct dataport_hooks *hooks);

/* When accept() last failed (clock_now_ms), and why; 0 if it never has. */
int64_t dataport_accept_trouble(char *why, size_t len);

#endif
