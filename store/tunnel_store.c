#include "tunnel_store.h"

#include "keys.h"

#include <stdio.h>

static void tunnel_key(char *out, size_t cap, const char *pool, const char *wid)
{
    snprintf(out, cap, K_WORKER_TUNNEL, pool, wid);
}

int tunnel_record_set(struct rconn *rc, const char *pool, const char *wid, const char *addr,
                      long ttl_ms)
{
    char key[160];

    tunnel_key(key, sizeof(key), pool, wid);
    return reply_done(rconn_cmd(rc, 0, "SET %s %s PX %ld", key, addr, ttl_ms));
}

/* KEYS: the record. ARGV: the holder's address, the ttl (ms). A record that
 * expired (the store was unreachable longer than its ttl) is written again:
 * nobody else holds the tunnel then. */
static struct rscript renew_script = {"tunnel_renew",
                                      "local v = redis.call('GET', KEYS[1])\n"
                                      "if v == ARGV[1] then\n"
                                      "  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
                                      "end\n"
                                      "if not v then\n"
                                      "  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
                                      "  return 1\n"
                                      "end\n"
                                      "return 0\n",
                                      ""};

int tunnel_record_renew(struct rconn *rc, const char *pool, const char *wid, const char *addr,
                        long ttl_ms)
{
    char key[160], ttl[24];
    redisReply *r;
    int held;

    tunnel_key(key, sizeof(key), pool, wid);
    snprintf(ttl, sizeof(ttl), "%ld", ttl_ms);
    const char *argv[3] = {key, addr, ttl};
    r = rconn_eval(rc, &renew_script, 1, 2, argv);
    if (!r)
        return -1;
    held = reply_int(r, 0) == 1;
    freeReplyObject(r);
    return held;
}

/* KEYS: the record. ARGV: the holder's address. */
static struct rscript release_script = {"tunnel_release",
                                        "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
                                        "  redis.call('DEL', KEYS[1])\n"
                                        "end\n"
                                        "return 0\n",
                                        ""};

int tunnel_record_release(struct rconn *rc, const char *pool, const char *wid, const char *addr)
{
    char key[160];

    tunnel_key(key, sizeof(key), pool, wid);
    const char *argv[2] = {key, addr};
    return reply_done(rconn_eval(rc, &release_script, 1, 1, argv));
}

int tunnel_record_get(struct rconn *rc, const char *pool, const char *wid, char *out, size_t cap)
{
    char key[160];
    redisReply *r;
    const char *v;
    int found;

    tunnel_key(key, sizeof(key), pool, wid);
    r = rconn_cmd(rc, 0, "GET %s", key);
    if (!r)
        return -1;
    v = reply_str(r);
    found = v && *v;
    if (found)
        snprintf(out, cap, "%s", v);
    freeReplyObject(r);
    return found;
}
