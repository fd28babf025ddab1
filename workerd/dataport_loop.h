/* dataport_loop.h: the data port's insides, shared by its files (not an API):
 * dataport.c (listening, the event loop, timers, resolver threads),
 * dataport_conn.c (one gateway connection's exchanges), dataport_pool.c
 * (kept connections to sandboxes), dataport_io.c (non-blocking I/O).
 *
 * Every socket is non-blocking and registered once, edge-triggered, for
 * reading and writing; what epoll said is kept in can_read/can_write and
 * cleared on EAGAIN, so no epoll_ctl is needed as interest changes. */
#ifndef WORKERD_DATAPORT_LOOP_H
#define WORKERD_DATAPORT_LOOP_H

#include "dataport.h"
#include "dataport_frame.h"
#include "dataport_head.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define DATAPORT_HEAD_MAX ((size_t)64 * 1024) /* a request or response head */
#define DATAPORT_SCRATCH ((size_t)256 * 1024) /* one read */
#define DATAPORT_MAX_CONNS 8192               /* gateway connections */
#define DATAPORT_MAX_RESOLVING 64             /* lookups waiting on dockerd */
#define DATAPORT_IP_MAX 64
#define DATAPORT_UPKEY_MAX (DATAPORT_ID_MAX + DATAPORT_IP_MAX + 16)

/* Timeouts, ms. The idle one is longer than nginx's keepalive_timeout (60 s):
 * the gateway closes an idle connection first, so it never sends a request
 * down one the data port is closing. */
#define DATAPORT_HEAD_TIMEOUT 30000    /* a head begun must be complete */
#define DATAPORT_IDLE_TIMEOUT 75000    /* no request on a kept connection */
#define DATAPORT_CONNECT_TIMEOUT 5000  /* to a sandbox's port */
#define DATAPORT_RELAY_TIMEOUT 3600000 /* no byte either way in an exchange */
#define DATAPORT_LINGER_TIMEOUT 2000   /* draining after a refusal */
#define DATAPORT_POOL_IDLE 30000       /* a kept sandbox connection unused */

enum dp_kind { DP_LISTEN, DP_WAKE, DP_CLIENT, DP_UP, DP_DEAD };

/* First in every struct epoll points at. A closed one is freed only after
 * the batch of events it was closed in: a later event of the same batch may
 * still point at it (DP_DEAD: skipped). */
struct dp_ep {
    enum dp_kind kind;
    int fd;
    int can_read, can_write;
    int hup;             /* the peer closed its side (or the socket failed) */
    struct dp_ep *grave; /* closed, to be freed after this batch */
};

/* Bytes waiting to be written; freed when empty, so an idle stream holds none. */
struct dp_buf {
    char *p;
    size_t off, len, cap;
};

struct dp_conn;

/* A connection to a sandbox's port, in an exchange (conn) or idle in the pool. */
struct dp_up {
    struct dp_ep ep;
    struct dp_conn *conn;
    char key[DATAPORT_UPKEY_MAX]; /* "sandbox:port@ip": reused for that only */
    int reused;
    int64_t idle_until;
    struct dp_up *prev, *next; /* the pool's list, most recently kept first */
};

enum dp_state {
    ST_HEAD,    /* reading a request head */
    ST_RESOLVE, /* a resolver thread is asking where the sandbox is */
    ST_CONNECT, /* connecting to the sandbox's port */
    ST_RELAY,   /* one request and its response */
    ST_TUNNEL,  /* after 101: bytes both ways until both sides end */
    ST_LINGER,  /* an answer sent, then "close": draining what still comes */
};

struct dp_loop;

/* A connection from the gateway. */
struct dp_conn {
    struct dp_ep ep;
    struct dp_loop *loop;
    struct dp_conn *prev, *next; /* the loop's list, for timeouts */
    enum dp_state state;
    int64_t deadline;
    char *in;                       /* the request head being read, and what came after it */
    size_t in_len, in_cap, in_seen; /* in_seen: searched for the head's end */
    struct dataport_head h;
    char ip[DATAPORT_IP_MAX];
    struct dataport_body req, resp;
    char *rh; /* the response head, until it is complete */
    size_t rh_len, rh_cap, rh_seen;
    int resp_head; /* the response head was forwarded */
    int interim;   /* 1xx answers dropped */
    int keep;      /* the answer told the gateway it may send another */
    int resp_keep; /* the sandbox keeps its connection */
    int up_dirty;  /* the sandbox sent more than its response */
    int client_eof, up_eof, up_shut, client_shut;
    struct dp_up *up;
    struct dp_buf to_up, to_client;
    char *fwd;      /* a bodiless request's head, sent down a kept connection: */
    size_t fwd_len; /* sent again on a new one if that was closed meanwhile */
    int ready;      /* in the loop's ready list */
    struct dp_conn *rprev, *rnext;
    struct dp_conn *rwait; /* the next one waiting on the same lookup */
};

/* A lookup in flight, and every connection waiting on its answer: requests
 * for one sandbox that miss the cache together cost one lookup, and the bound
 * on lookups is a bound on sandboxes, not on requests. The loop's alone. */
struct dp_pending {
    char sbid[DATAPORT_ID_MAX + 1];
    struct dp_conn *waiters;
    struct dp_pending *next;
};

struct dp_resolved {
    struct dp_pending *pending;
    int rc;
    char ip[DATAPORT_IP_MAX];
    struct dp_resolved *next;
};

struct dp_loop {
    struct dp_ep listen, wake;
    int ep;
    struct dataport_hooks hooks;
    char *scratch;
    int64_t now;
    struct dp_conn *conns;
    int nconns;
    struct dp_conn *ready; /* more to do without an event: after this round */
    struct dp_ep *graves;
    struct dp_up *idle; /* the pool */
    int nidle;
    pthread_mutex_t mu; /* resolver threads' answers */
    struct dp_resolved *resolved;
    struct dp_pending *pending;
    int npending;
};

/* dataport.c */
/* Async: conn_resolved answers. -1 (nothing started) when DATAPORT_MAX_RESOLVING
 * other sandboxes are being looked up, or no thread could start. */
int dp_loop_resolve(struct dp_loop *l, struct dp_conn *c);
void dp_loop_ready(struct dp_loop *l, struct dp_conn *c);
void dp_loop_unready(struct dp_loop *l, struct dp_conn *c);
int dp_loop_watch(struct dp_loop *l, struct dp_ep *e);
void dp_note_trouble(int err);
void dp_loop_bury(struct dp_loop *l, struct dp_ep *e); /* closes its fd, frees it later */

/* dataport_conn.c */
struct dp_conn *conn_new(struct dp_loop *l, int fd);
void conn_progress(struct dp_conn *c);
void conn_resolved(struct dp_conn *c, int rc, const char *ip);
void conn_timeout(struct dp_conn *c);
void conn_refuse(int fd, int code, const char *msg);

/* dataport_pool.c */
struct dp_up *pool_take(struct dp_loop *l, const char *key);
void pool_put(struct dp_loop *l, struct dp_up *u);  /* or closes u, if not clean */
void pool_drop(struct dp_loop *l, struct dp_up *u); /* an idle one closed or expired */
void pool_expire(struct dp_loop *l);
void up_close(struct dp_loop *l, struct dp_up *u);

/* dataport_io.c: >0 bytes, 0 EOF, -1 EAGAIN (flag cleared), -2 error. */
ssize_t io_recv(struct dp_ep *e, char *p, size_t n);
ssize_t io_send(struct dp_ep *e, const char *p, size_t n);
/* Writes what it can of b; 0 when empty after, 1 when some is left, -1 on error. */
int buf_flush(struct dp_buf *b, struct dp_ep *e);
int buf_append(struct dp_buf *b, const char *p, size_t n);
void buf_free(struct dp_buf *b);
/* Sends p directly where it can and keeps the rest in b. 0, or -1 on error. */
int send_or_keep(struct dp_buf *b, struct dp_ep *e, const char *p, size_t n);
/* A non-blocking connect to ip:port, from ip itself when from_ip (see
 * dataport_hooks.from_sandbox_addr); the socket, or -1 with errno. */
int io_connect(const char *ip, const char *port, int from_ip);
int64_t io_now_ms(void);

#endif
