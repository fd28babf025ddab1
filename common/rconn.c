#include "rconn.h"

#include "clock.h"
#include "log.h"
#include "rsentinel.h"

#include <openssl/sha.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void rconn_init(struct rconn *rc, const char *host, int port, const char *socket_path,
                int timeout_ms)
{
    memset(rc, 0, sizeof(*rc));
    snprintf(rc->host, sizeof(rc->host), "%s", host ? host : "127.0.0.1");
    snprintf(rc->socket_path, sizeof(rc->socket_path), "%s", socket_path ? socket_path : "");
    rc->port = port;
    rc->timeout_ms = timeout_ms > 0 ? timeout_ms : 1000;
}

/* In a cluster, every node's connection goes: a broken one is rare, and the
 * others reconnect on their next command. */
void rconn_close(struct rconn *rc)
{
    if (rc->ctx)
        redisFree(rc->ctx);
    rc->ctx = NULL;
    for (int i = 0; rc->cluster && i < rc->cl.n; i++) {
        if (rc->cl.node[i].ctx)
            redisFree(rc->cl.node[i].ctx);
        rc->cl.node[i].ctx = NULL;
    }
}

void rconn_set_cluster(struct rconn *rc, int on)
{
    rc->cluster = on;
    memset(&rc->cl, 0, sizeof(rc->cl));
    if (on)
        rcluster_node_index(&rc->cl, rc->host, rc->port); /* the seed, node 0 */
}

void rconn_set_auth(struct rconn *rc, const char *user, const char *password)
{
    rc->user = user;
    rc->password = password;
}

void rconn_set_sentinels(struct rconn *rc, const char *sentinels, const char *master_name,
                         const char *password)
{
    rc->sentinels = sentinels && sentinels[0] ? sentinels : NULL;
    rc->master_name = master_name;
    rc->sentinel_password = password && password[0] ? password : NULL;
}

/* Under Sentinel, a primary that hangs (a paused process, a host or network
 * that stops answering) closes none of its connections. Each thread's idle
 * one to it failed its next command only after the timeout, and only then
 * asked the sentinels again: after a failover, corral-api's 64 threads a
 * process answered 503 one after another (21 s under load, over a minute
 * when every thread held one), while corral-sched (one connection, already
 * on the new primary) judged the workers whose heartbeats were refused
 * meanwhile dead (decision 0070). So a connection failure in any thread
 * makes every connection of the process made before it suspect: each is
 * dropped at its next use and made again through the sentinels. Counted only
 * under Sentinel, where there is another node to go to. */
static atomic_uint failures;

static void note_failure(const struct rconn *rc)
{
    if (rc->sentinels)
        atomic_fetch_add(&failures, 1);
}

static struct timeval ms_tv(int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (long)(ms % 1000) * 1000};
    return tv;
}

/* A refused login closes the connection: the next command tries again (the
 * operator may be fixing the password). The reply names no password. */
static int rconn_auth(struct rconn *rc)
{
    redisReply *r;

    if (!rc->password)
        return 0;
    r = redisCommand(rc->ctx, "AUTH %s %s", rc->user ? rc->user : "default", rc->password);
    if (r && r->type == REDIS_REPLY_STATUS) {
        freeReplyObject(r);
        return 0;
    }
    if (r && r->type == REDIS_REPLY_ERROR)
        log_err("redis: AUTH as %s refused: %s", rc->user ? rc->user : "default", r->str);
    if (r)
        freeReplyObject(r);
    rconn_close(rc);
    return -1;
}

static int rconn_connect(struct rconn *rc)
{
    struct timeval tv = ms_tv(rc->timeout_ms);
    char host[256];
    int port = rc->port;

    if (rc->ctx)
        return 0;
    /* Read before the sentinels are asked: a failure meanwhile makes this one suspect too. */
    rc->failures_seen = atomic_load(&failures);
    snprintf(host, sizeof(host), "%s", rc->host);
    if (rc->sentinels && sentinel_primary(rc, host, sizeof(host), &port) != 0)
        return -1;
    rc->ctx = rc->socket_path[0] && !rc->sentinels && !rc->cluster
                  ? redisConnectUnixWithTimeout(rc->socket_path, tv)
                  : redisConnectWithTimeout(host, port, tv);
    if (!rc->ctx || rc->ctx->err) {
        rconn_close(rc);
        return -1;
    }
    redisSetTimeout(rc->ctx, tv);
    if (rconn_auth(rc) != 0)
        return -1;
    return rc->sentinels ? check_primary(rc) : 0;
}

/* A reply is usable unless the connection broke; an error reply is logged and
 * reported as NULL, since every caller treats both as "state unavailable". */
static redisReply *finish(struct rconn *rc, redisReply *r, int block_ms)
{
    if (block_ms > 0 && rc->ctx)
        redisSetTimeout(rc->ctx, ms_tv(rc->timeout_ms));
    if (!r) {
        note_failure(rc);
        rconn_close(rc);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        log_err("redis: %s", r->str);
        /* a primary turned replica, or one not ready: ask the sentinels again */
        if (rc->sentinels &&
            (strncmp(r->str, "READONLY", 8) == 0 || strncmp(r->str, "MASTERDOWN", 10) == 0 ||
             strncmp(r->str, "LOADING", 7) == 0)) {
            note_failure(rc);
            rconn_close(rc);
        }
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

/* A connection Redis closed (a restart) is readable at EOF while idle: drop it
 * before sending, so the first request after Redis comes back does not fail. */
static void drop_if_closed(struct rconn *rc)
{
    struct pollfd p = {.fd = rc->ctx ? rc->ctx->fd : -1, .events = POLLIN};

    if (rc->ctx && poll(&p, 1, 0) > 0)
        rconn_close(rc);
}

static int prepare(struct rconn *rc, int block_ms)
{
    drop_if_closed(rc);
    if (rc->ctx && rc->sentinels && rc->failures_seen != atomic_load(&failures))
        rconn_close(rc); /* made before a failure elsewhere: ask the sentinels again */
    if (rconn_connect(rc) != 0) {
        note_failure(rc);
        return -1;
    }
    if (block_ms > 0)
        redisSetTimeout(rc->ctx, ms_tv(rc->timeout_ms + block_ms));
    return 0;
}

/* With a replica to fail over to, nothing is answered until a replica has
 * what it wrote: a WAIT goes right behind each command, in the same round
 * trip (after a read it answers at once), so a failover loses no write a
 * client was told of (decision 0058). With no replica acknowledging, Corral
 * answers anyway (the primary has the write) and stops waiting for a while:
 * a lost replica costs durability, not every request's latency. */
static void note_wait(struct rconn *rc, redisReply *w)
{
    if (w && w->type == REDIS_REPLY_INTEGER && w->integer >= 1) {
        freeReplyObject(w);
        return;
    }
    if (w && w->type == REDIS_REPLY_ERROR) { /* not a primary any more */
        log_err("redis: WAIT: %s", w->str);
        note_failure(rc);
        rconn_close(rc);
    } else {
        log_err("redis: no replica acknowledged a write within %d ms; not waiting for %d s",
                RCONN_WAIT_MS, RCONN_WAIT_SKIP_MS / 1000);
        rc->wait_skip_until = clock_now_ms() + RCONN_WAIT_SKIP_MS;
    }
    if (w)
        freeReplyObject(w);
}

/* Commands that change nothing get no WAIT: behind a read it would still
 * wait for this connection's last write, a rate-limit bucket's say, and a
 * replica's round trip on every read cost a third of the API's req/s. */
static int changes_nothing(const char *cmd, size_t len)
{
    static const char *const reads[] = {
        "GET",    "HGET",   "HGETALL",       "HMGET",  "HVALS",  "HLEN",      "HEXISTS",   "EXISTS",
        "MGET",   "TTL",    "PTTL",          "TYPE",   "SCARD",  "SMEMBERS",  "SISMEMBER", "ZCARD",
        "ZCOUNT", "ZRANGE", "ZRANGEBYSCORE", "ZSCORE", "XRANGE", "XREVRANGE", "XLEN",      "XINFO",
        "XREAD",  "LLEN",   "LRANGE",        "PING",   "TIME",   "ROLE",      NULL};

    for (const char *const *r = reads; *r; r++)
        if (strlen(*r) == len && strncasecmp(*r, cmd, len) == 0)
            return 1;
    return 0;
}

/* The reply to the command just appended (REDIS_OK), a WAIT sent behind it
 * when the command may write what must outlive a failover. */
static redisReply *reply_waited(struct rconn *rc, int appended, int unwaited)
{
    redisReply *r = NULL, *w = NULL;
    int waiting = !unwaited && clock_now_ms() >= rc->wait_skip_until;

    if (appended != REDIS_OK ||
        (waiting && redisAppendCommand(rc->ctx, "WAIT 1 %d", RCONN_WAIT_MS) != REDIS_OK) ||
        redisGetReply(rc->ctx, (void **)&r) != REDIS_OK)
        return NULL; /* finish closes the connection */
    if (waiting && redisGetReply(rc->ctx, (void **)&w) != REDIS_OK) {
        freeReplyObject(r);
        return NULL;
    }
    if (waiting)
        note_wait(rc, w);
    return r;
}

/* Puts rc on cluster node i: its connection becomes rc->ctx, and the one
 * rc leaves is kept for later. */
static void cluster_switch(struct rconn *rc, int i)
{
    struct rcluster *cl = &rc->cl;

    if (i == cl->cur)
        return;
    cl->node[cl->cur].ctx = rc->ctx;
    rc->ctx = cl->node[i].ctx;
    cl->node[i].ctx = NULL;
    cl->cur = i;
    snprintf(rc->host, sizeof(rc->host), "%s", cl->node[i].host);
    rc->port = cl->node[i].port;
}

/* The node a MOVED or ASK error sends the command to (a MOVED also tells
 * which node serves the slot from now on), or -1 for any other error. */
static int redirected_to(struct rconn *rc, const char *err, int *ask)
{
    char host[64];
    int slot, port, i;

    if (rcluster_redirect(err, ask, &slot, host, sizeof(host), &port) != 0)
        return -1;
    i = rcluster_node_index(&rc->cl, host, port);
    if (i < 0)
        log_err("redis: cluster has more than %d nodes", RCLUSTER_NODES);
    else if (!*ask)
        rc->cl.slot_node[slot] = (unsigned char)(i + 1);
    return i;
}

static int asking(struct rconn *rc)
{
    redisReply *r = redisCommand(rc->ctx, "ASKING");
    int ok = r && r->type == REDIS_REPLY_STATUS;

    if (r)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

/* Sends a formatted command to the node serving its key (the one it was on
 * for a keyless command), following redirections a bounded number of times. */
static redisReply *cluster_send(struct rconn *rc, int block_ms, const char *buf, long long len)
{
    const char *key;
    size_t klen;
    int ask = 0, slot = -1, node = rc->cl.cur;

    if (len < 0)
        return NULL;
    if (rcluster_command_key(buf, (size_t)len, &key, &klen) == 0)
        slot = (int)rcluster_keyslot(key, klen);
    if (slot >= 0 && rc->cl.slot_node[slot])
        node = rc->cl.slot_node[slot] - 1;
    for (int hop = 0; hop < 4; hop++) {
        redisReply *r = NULL;
        cluster_switch(rc, node);
        if (prepare(rc, block_ms) != 0 || (ask && asking(rc) != 0) ||
            redisAppendFormattedCommand(rc->ctx, buf, (size_t)len) != REDIS_OK ||
            redisGetReply(rc->ctx, (void **)&r) != REDIS_OK)
            return NULL; /* finish closes the connection */
        if (r->type != REDIS_REPLY_ERROR || (node = redirected_to(rc, r->str, &ask)) < 0)
            return r;
        freeReplyObject(r);
    }
    log_err("redis: a command was redirected 4 times");
    return NULL;
}

static redisReply *cluster_argv(struct rconn *rc, int block_ms, int argc, const char **argv,
                                const size_t *lens)
{
    char *buf = NULL;
    long long len = redisFormatCommandArgv(&buf, argc, argv, lens);
    redisReply *r = cluster_send(rc, block_ms, buf, len);

    redisFreeCommand(buf);
    return r;
}

static redisReply *send_argv(struct rconn *rc, int block_ms, int unwaited, int argc,
                             const char **argv, const size_t *lens)
{
    if (rc->cluster)
        return cluster_argv(rc, block_ms, argc, argv, lens);
    if (!rc->sentinels || block_ms > 0)
        return redisCommandArgv(rc->ctx, argc, argv, lens);
    return reply_waited(rc, redisAppendCommandArgv(rc->ctx, argc, argv, lens), unwaited);
}

redisReply *rconn_cmd(struct rconn *rc, int block_ms, const char *fmt, ...)
{
    va_list ap;
    redisReply *r;

    if (rc->cluster) {
        char *buf = NULL;
        int len;
        va_start(ap, fmt);
        len = redisvFormatCommand(&buf, fmt, ap);
        va_end(ap);
        r = cluster_send(rc, block_ms, buf, len);
        redisFreeCommand(buf);
        return finish(rc, r, block_ms);
    }
    if (prepare(rc, block_ms) != 0)
        return NULL;
    va_start(ap, fmt);
    if (!rc->sentinels || block_ms > 0) /* a blocking read waits for nothing more */
        r = redisvCommand(rc->ctx, fmt, ap);
    else
        r = reply_waited(rc, redisvAppendCommand(rc->ctx, fmt, ap),
                         changes_nothing(fmt, strcspn(fmt, " ")));
    va_end(ap);
    return finish(rc, r, block_ms);
}

redisReply *rconn_cmdargv(struct rconn *rc, int block_ms, int argc, const char **argv,
                          const size_t *lens)
{
    if (!rc->cluster && prepare(rc, block_ms) != 0)
        return NULL;
    return finish(rc,
                  send_argv(rc, block_ms,
                            changes_nothing(argv[0], lens ? lens[0] : strlen(argv[0])), argc, argv,
                            lens),
                  block_ms);
}

/* The script's SHA-1, worked out once and copied into out (41 bytes).
 * Scripts are shared by every thread of a process: an unlocked lazy write let
 * another thread send a half-written SHA whose length grew while hiredis
 * formatted the command (its assertion, and corral-api, died). */
static void script_sha(struct rscript *s, char *out)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    unsigned char d[SHA_DIGEST_LENGTH];

    pthread_mutex_lock(&mu);
    if (!s->sha[0]) {
        char hex[sizeof(s->sha)];
        SHA1((const unsigned char *)s->body, strlen(s->body), d);
        for (int i = 0; i < SHA_DIGEST_LENGTH; i++)
            snprintf(hex + (size_t)2 * i, 3, "%02x", d[i]);
        memcpy(s->sha, hex, sizeof(hex));
    }
    memcpy(out, s->sha, sizeof(s->sha));
    pthread_mutex_unlock(&mu);
}

static redisReply *eval(struct rconn *rc, struct rscript *s, int unwaited, int nkeys, int nargs,
                        const char **keys_then_args)
{
    const char *argv[RCONN_EVAL_MAX + 3];
    char nk[16], sha[sizeof(s->sha)];
    redisReply *r;
    int argc = 0;

    if (nkeys + nargs > RCONN_EVAL_MAX)
        return NULL;
    script_sha(s, sha);
    drop_if_closed(rc);
    argv[argc++] = "EVALSHA";
    argv[argc++] = sha;
    snprintf(nk, sizeof(nk), "%d", nkeys);
    argv[argc++] = nk;
    for (int i = 0; i < nkeys + nargs; i++)
        argv[argc++] = keys_then_args[i];
    if (!rc->cluster && prepare(rc, 0) != 0)
        return NULL;
    r = send_argv(rc, 0, unwaited, argc, argv, NULL);
    if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0) {
        freeReplyObject(r);
        argv[0] = "EVAL";
        argv[1] = s->body;
        r = send_argv(rc, 0, unwaited, argc, argv, NULL);
    }
    return finish(rc, r, 0);
}

redisReply *rconn_eval(struct rconn *rc, struct rscript *s, int nkeys, int nargs,
                       const char **keys_then_args)
{
    return eval(rc, s, 0, nkeys, nargs, keys_then_args);
}

redisReply *rconn_eval_unwaited(struct rconn *rc, struct rscript *s, int nkeys, int nargs,
                                const char **keys_then_args)
{
    return eval(rc, s, 1, nkeys, nargs, keys_then_args);
}

int reply_done(redisReply *r)
{
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

long long reply_int(const redisReply *r, long long dflt)
{
    if (!r)
        return dflt;
    if (r->type == REDIS_REPLY_INTEGER)
        return r->integer;
    if (r->type == REDIS_REPLY_STRING)
        return strtoll(r->str, NULL, 10);
    return dflt;
}

const char *reply_str(const redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) ? r->str : NULL;
}

const char *reply_hget(const redisReply *r, const char *field)
{
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        if (r->element[i]->type == REDIS_REPLY_STRING && strcmp(r->element[i]->str, field) == 0)
            return reply_str(r->element[i + 1]);
    return NULL;
}
