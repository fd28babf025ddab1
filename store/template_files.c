/* template_files.c: what a COPY step uploaded, by the SDK's files hash, in
 * its workspace's slot. Kept in Redis (capped at TEMPLATE_FILE_MAX, 24 h):
 * every gateway host reaches it, and the worker of a build fetches it
 * through corral-api (docs/templates.md). */
#include "template_store.h"

#include "keys.h"
#include "record_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILE_TTL_S 86400

int template_file_exists(struct rconn *rc, const char *ws, const char *hash)
{
    char key[192];
    redisReply *r;
    int n;

    snprintf(key, sizeof(key), K_TPL_FILE, ws, hash);
    r = rconn_cmd(rc, 0, "PEXPIRE %s %lld", key, FILE_TTL_S * 1000LL);
    if (!r)
        return -1;
    n = (int)reply_int(r, 0);
    freeReplyObject(r);
    return n;
}

/* The workspace's uploaded bytes are counted while its files may still be
 * held: a tenant cannot fill Redis with uploads (decision 0080). */
static struct rscript budget_script = {
    "template_upload_budget",
    "local used = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
    "if used + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return 0 end\n"
    "redis.call('INCRBY', KEYS[1], ARGV[1])\n"
    "redis.call('PEXPIRE', KEYS[1], ARGV[3])\n"
    "return 1\n",
    ""};

int template_file_put(struct rconn *rc, const char *ws, const char *hash, const char *data,
                      size_t len, long long budget)
{
    char key[192], bytes[128], n[24], cap[24], ttl[24];
    const char *argv[4] = {bytes, n, cap, ttl};
    int room;

    snprintf(bytes, sizeof(bytes), K_TPL_BYTES, ws);
    snprintf(n, sizeof(n), "%zu", len);
    snprintf(cap, sizeof(cap), "%lld", budget);
    snprintf(ttl, sizeof(ttl), "%lld", FILE_TTL_S * 1000LL);
    room = record_eval_int(rc, &budget_script, 1, 3, argv);
    if (room != 1)
        return room < 0 ? -1 : -2;
    snprintf(key, sizeof(key), K_TPL_FILE, ws, hash);
    return reply_done(rconn_cmd(rc, 0, "SET %s %b EX %d", key, data, len, FILE_TTL_S));
}

int template_file_get(struct rconn *rc, const char *ws, const char *hash, char **data, size_t *len)
{
    char key[192];
    redisReply *r;
    int found;

    snprintf(key, sizeof(key), K_TPL_FILE, ws, hash);
    r = rconn_cmd(rc, 0, "GET %s", key);
    if (!r)
        return -1;
    found = r->type == REDIS_REPLY_STRING;
    *data = NULL;
    *len = 0;
    if (found) {
        *data = malloc(r->len ? r->len : 1);
        if (!*data) {
            freeReplyObject(r);
            return -1;
        }
        memcpy(*data, r->str, r->len);
        *len = r->len;
    }
    freeReplyObject(r);
    return found;
}

int template_upload_claim(struct rconn *rc, const char *ws, const char *nonce, long ttl_s)
{
    char key[160];
    redisReply *r;
    int first;

    snprintf(key, sizeof(key), K_TPL_UPLOAD, ws, nonce);
    r = rconn_cmd(rc, 0, "SET %s 1 NX EX %ld", key, ttl_s);
    if (!r)
        return -1;
    first = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    return first;
}
