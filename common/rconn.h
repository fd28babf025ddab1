/* rconn.h: one Redis connection, owned by one thread, that heals itself.
 *
 * A command on a broken connection fails at once (NULL) and the next command
 * reconnects, so while Redis is down callers answer 503 promptly and service
 * resumes when Redis is back, with no restart. Every (re)connect logs in with
 * AUTH user password when rconn_set_auth gave them (decision 0030).
 *
 * With sentinels (rconn_set_sentinels), every (re)connect asks them where the
 * primary is and checks with ROLE that it is one; a reply saying the node is
 * a replica now (READONLY) drops the connection, so a failover costs the
 * requests in flight and the next ones find the new primary (decision 0058).
 *
 * In a Redis Cluster (rconn_set_cluster), each command goes to the node
 * serving its key, with a connection per node, following MOVED and ASK
 * (rcluster.h; decision 0059). */
#ifndef CORRAL_RCONN_H
#define CORRAL_RCONN_H

#include "rcluster.h"

#include <hiredis/hiredis.h>
#include <stddef.h>

struct rconn {
    redisContext *ctx;
    char host[256];
    int port;
    char socket_path[256]; /* used instead of host:port when set */
    int timeout_ms;        /* connect and ordinary command timeout */
    const char *user;      /* ACL user and password (not copied; NULL: no AUTH) */
    const char *password;
    const char *sentinels;         /* "host:port,...", or NULL: host:port is the primary */
    const char *master_name;       /* the name the sentinels monitor it by */
    const char *sentinel_password; /* AUTH to the sentinels (NULL: none) */
    unsigned sentinel_next;        /* the sentinel asked first: the last that answered */
    unsigned failures_seen;        /* the process's failure count when ctx was made (rconn.c) */
    long long wait_skip_until;     /* no WAIT for a replica before this (clock_now_ms) */
    int cluster;                   /* Redis Cluster: host:port is a seed (decision 0059) */
    struct rcluster cl;            /* its nodes and the slots learned from MOVED */
};

#define RCONN_WAIT_MS 250       /* how long a write waits for a replica's ack */
#define RCONN_WAIT_SKIP_MS 5000 /* then how long writes go unwaited */

void rconn_init(struct rconn *rc, const char *host, int port, const char *socket_path,
                int timeout_ms);
void rconn_close(struct rconn *rc);
/* The ACL user and password AUTH sends on every connect; both must outlive rc. */
void rconn_set_auth(struct rconn *rc, const char *user, const char *password);
/* Finds the primary through these sentinels from now on; the strings must
 * outlive rc. */
void rconn_set_sentinels(struct rconn *rc, const char *sentinels, const char *master_name,
                         const char *password);

/* Routes every command to the cluster node serving its key from now on,
 * starting from host:port (rconn_init's). */
void rconn_set_cluster(struct rconn *rc, int on);

/* Runs one command. Returns the reply (caller frees with freeReplyObject), or
 * NULL when Redis is unreachable or the reply is an error (logged). block_ms > 0
 * extends the read timeout for a blocking command by that much. */
redisReply *rconn_cmd(struct rconn *rc, int block_ms, const char *fmt, ...);
/* The same with the arguments as an array, for a command whose argument count
 * is known only at run time (accounts.c's HSET of the limits a PATCH sets). */
redisReply *rconn_cmdargv(struct rconn *rc, int block_ms, int argc, const char **argv,
                          const size_t *lens);

/* Runs a Lua script by SHA, loading it on NOSCRIPT. keys then args, at most
 * RCONN_EVAL_MAX of them (a sandbox's record is written by one script with
 * every field as an argument: sandbox_insert). */
#define RCONN_EVAL_MAX 125
struct rscript {
    const char *name;
    const char *body;
    char sha[41];
};
redisReply *rconn_eval(struct rconn *rc, struct rscript *s, int nkeys, int nargs,
                       const char **keys_then_args);
/* The same for a script nothing of whose writes must outlive a failover (a
 * read-only one, a rate-limit bucket): no WAIT behind it (decision 0058). */
redisReply *rconn_eval_unwaited(struct rconn *rc, struct rscript *s, int nkeys, int nargs,
                                const char **keys_then_args);

/* Helpers over replies: integer or string reply as long long; string or NULL. */
long long reply_int(const redisReply *r, long long dflt);
const char *reply_str(const redisReply *r);
/* A command whose reply only matters as success or failure: frees r; 0, or
 * -1 when r is NULL (Redis failed). */
int reply_done(redisReply *r);
/* Field value from an HGETALL reply (array of field, value), or NULL. */
const char *reply_hget(const redisReply *r, const char *field);

#endif
