#include "accounts.h"

#include "clock.h"
#include "keys.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *role_name(enum role r)
{
    return r == ROLE_OWNER ? "owner" : r == ROLE_MEMBER ? "member" : "none";
}

enum role role_parse(const char *s)
{
    if (s && strcmp(s, "owner") == 0)
        return ROLE_OWNER;
    if (s && strcmp(s, "member") == 0)
        return ROLE_MEMBER;
    return ROLE_NONE;
}

int workspace_create(struct rconn *rc, const char *name, char ws_out[TOKEN_WS_MAX])
{
    char key[128];

    if (secret_random_hex(ws_out, 8) != 0)
        return -1;
    snprintf(key, sizeof(key), K_WS_INFO, ws_out);
    if (reply_done(rconn_cmd(rc, 0, "HSET %s name %s max_concurrent %ld created_at %lld", key, name,
                             ws_limit_defs[WS_LIMIT_MAX_CONCURRENT].dflt,
                             (long long)clock_now_ms())))
        return -1;
    return reply_done(rconn_cmd(rc, 0, "SADD " K_WORKSPACES " %s", ws_out));
}

int workspace_exists(struct rconn *rc, const char *ws)
{
    char key[128];
    redisReply *r;
    int n;

    snprintf(key, sizeof(key), K_WS_INFO, ws);
    r = rconn_cmd(rc, 0, "EXISTS %s", key);
    if (!r)
        return -1;
    n = (int)reply_int(r, 0);
    freeReplyObject(r);
    return n > 0;
}

/* The ceilings' defaults (decision 0063): room to raise each default a few
 * times, not to take a host. The timeout's ceiling is sandbox_max_timeout_s,
 * which bounds every create's timeout anyway: a default above what a create
 * may ask for would mean nothing. */
const struct ws_limit_def ws_limit_defs[WS_LIMIT_COUNT] = {
    [WS_LIMIT_MAX_CONCURRENT] = {"max_concurrent_sandboxes", "max_concurrent", 0,
                                 ACCOUNTS_MAX_CONCURRENT_MAX, 20,
                                 "ceiling_max_concurrent_sandboxes", 100},
    [WS_LIMIT_PIDS] = {"sandbox_pids_limit", "pids_limit", 64, 65536, 1024,
                       "ceiling_sandbox_pids_limit", 4096},
    [WS_LIMIT_DISK_MB] = {"sandbox_disk_mb", "disk_mb", 256, 1048576, 10240,
                          "ceiling_sandbox_disk_mb", 20480},
    [WS_LIMIT_TIMEOUT] = {"sandbox_timeout_s", "timeout_s", 1, 86400, 300, "sandbox_max_timeout_s",
                          86400},
};

int ws_limit_check(enum ws_limit i, long long value, long ceiling, char *err, size_t errlen)
{
    const struct ws_limit_def *d = &ws_limit_defs[i];

    if (value < d->min || value > d->max) {
        snprintf(err, errlen, "%s: must be an integer in [%ld, %ld]", d->name, d->min, d->max);
        return -1;
    }
    if (value > ceiling) {
        snprintf(err, errlen,
                 "%s: %lld is above this installation's ceiling of %ld (corral.conf %s)", d->name,
                 value, ceiling, d->ceiling_key);
        return -1;
    }
    return 0;
}

void ws_limits_cap(long limits[WS_LIMIT_COUNT], const long ceilings[WS_LIMIT_COUNT])
{
    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        if (limits[i] > ceilings[i])
            limits[i] = ceilings[i];
}

int workspace_info(struct rconn *rc, const char *ws, char *name, size_t namelen,
                   long limits[WS_LIMIT_COUNT])
{
    char key[128];
    const char *argv[3 + WS_LIMIT_COUNT] = {"HMGET", key, "name"};
    redisReply *r;

    snprintf(key, sizeof(key), K_WS_INFO, ws);
    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        argv[3 + i] = ws_limit_defs[i].field;
    r = rconn_cmdargv(rc, 0, 3 + WS_LIMIT_COUNT, argv, NULL);
    if (!r || r->elements != 1 + WS_LIMIT_COUNT) {
        if (r)
            freeReplyObject(r);
        return -1;
    }
    snprintf(name, namelen, "%s", reply_str(r->element[0]) ? reply_str(r->element[0]) : "");
    for (int i = 0; i < WS_LIMIT_COUNT; i++)
        limits[i] = (long)reply_int(r->element[i + 1], ws_limit_defs[i].dflt);
    freeReplyObject(r);
    return 0;
}

int workspace_limits_set(struct rconn *rc, const char *ws, const long limits[WS_LIMIT_COUNT],
                         const int set[WS_LIMIT_COUNT])
{
    char key[128], values[WS_LIMIT_COUNT][24];
    const char *argv[2 + 2 * WS_LIMIT_COUNT] = {"HSET", key};
    int argc = 2;

    snprintf(key, sizeof(key), K_WS_INFO, ws);
    for (int i = 0; i < WS_LIMIT_COUNT; i++) {
        if (!set[i])
            continue;
        snprintf(values[i], sizeof(values[i]), "%ld", limits[i]);
        argv[argc++] = ws_limit_defs[i].field;
        argv[argc++] = values[i];
    }
    return argc == 2 ? 0 : reply_done(rconn_cmdargv(rc, 0, argc, argv, NULL));
}

int apikey_create(struct rconn *rc, const char *server_secret, const char *ws, enum role role,
                  char id_out[TOKEN_ID_MAX], char token_out[TOKEN_TEXT_MAX])
{
    char secret[TOKEN_SECRET_MAX], mac[SECRET_MAC_HEX], key[160];

    if (secret_random_hex(id_out, 8) || secret_random_hex(secret, 24))
        return -1;
    secret_mac_hex(server_secret, secret, mac);
    snprintf(key, sizeof(key), K_APIKEY, ws, id_out);
    if (reply_done(rconn_cmd(rc, 0, "HSET %s mac %s role %s created_at %lld", key, mac,
                             role_name(role), (long long)clock_now_ms())))
        return -1;
    snprintf(key, sizeof(key), K_WS_KEYS, ws);
    if (reply_done(rconn_cmd(rc, 0, "SADD %s %s", key, id_out)))
        return -1;
    token_format(TOKEN_API_KEY, ws, id_out, secret, token_out);
    return 0;
}

int apikey_delete(struct rconn *rc, const char *ws, const char *id)
{
    char key[160], set[128];
    redisReply *r;
    int n;

    snprintf(key, sizeof(key), K_APIKEY, ws, id);
    r = rconn_cmd(rc, 0, "DEL %s", key);
    if (!r)
        return -1;
    n = (int)reply_int(r, 0);
    freeReplyObject(r);
    snprintf(set, sizeof(set), K_WS_KEYS, ws);
    if (reply_done(rconn_cmd(rc, 0, "SREM %s %s", set, id)))
        return -1;
    return n > 0;
}

int apikey_verify(struct rconn *rc, const char *server_secret, const struct token *t,
                  enum role *role)
{
    char key[160], mac[SECRET_MAC_HEX];
    const char *stored;
    redisReply *r;
    int ok;

    snprintf(key, sizeof(key), K_APIKEY, t->ws, t->id);
    r = rconn_cmd(rc, 0, "HMGET %s mac role", key);
    if (!r)
        return -1;
    secret_mac_hex(server_secret, t->secret, mac);
    stored = r->elements == 2 ? reply_str(r->element[0]) : NULL;
    ok = stored && secret_equal(stored, mac);
    *role = ok ? role_parse(reply_str(r->element[1])) : ROLE_NONE;
    freeReplyObject(r);
    return ok && *role != ROLE_NONE;
}

int jointoken_create(struct rconn *rc, const char *server_secret, const char *ws, long ttl_s,
                     char id_out[TOKEN_ID_MAX], char token_out[TOKEN_TEXT_MAX], int64_t *expires_ms)
{
    char secret[TOKEN_SECRET_MAX], mac[SECRET_MAC_HEX], key[160];

    if (secret_random_hex(id_out, 8) || secret_random_hex(secret, 24))
        return -1;
    secret_mac_hex(server_secret, secret, mac);
    *expires_ms = clock_now_ms() + (int64_t)ttl_s * 1000;
    snprintf(key, sizeof(key), K_JOINTOKEN, ws, id_out);
    if (reply_done(rconn_cmd(rc, 0, "HSET %s mac %s expires_at %lld revoked 0", key, mac,
                             (long long)*expires_ms)))
        return -1;
    snprintf(key, sizeof(key), K_WS_JTS, ws);
    if (reply_done(rconn_cmd(rc, 0, "SADD %s %s", key, id_out)))
        return -1;
    snprintf(key, sizeof(key), K_JT_INDEX, id_out);
    if (reply_done(rconn_cmd(rc, 0, "SET %s %s", key, ws)))
        return -1;
    token_format(TOKEN_JOIN, ws, id_out, secret, token_out);
    return 0;
}

int jointoken_workspace(struct rconn *rc, const char *id, char ws[TOKEN_WS_MAX])
{
    char key[160];
    redisReply *r;

    snprintf(key, sizeof(key), K_JT_INDEX, id);
    r = rconn_cmd(rc, 0, "GET %s", key);
    if (!r)
        return -1;
    if (!reply_str(r)) {
        freeReplyObject(r);
        return 0;
    }
    snprintf(ws, TOKEN_WS_MAX, "%s", reply_str(r));
    freeReplyObject(r);
    return 1;
}

int jointoken_revoke(struct rconn *rc, const char *ws, const char *id)
{
    char key[160], found_ws[TOKEN_WS_MAX] = "";
    redisReply *r;
    int n;

    if (!ws) {
        n = jointoken_workspace(rc, id, found_ws);
        if (n <= 0)
            return n;
        ws = found_ws;
    }
    snprintf(key, sizeof(key), K_JOINTOKEN, ws, id);
    /* HSET XX semantics: only an existing token can be revoked. */
    r = rconn_cmd(rc, 0, "EVAL %s 1 %s",
                  "if redis.call('EXISTS', KEYS[1]) == 1 then "
                  "redis.call('HSET', KEYS[1], 'revoked', '1') return 1 end return 0",
                  key);
    if (!r)
        return -1;
    n = (int)reply_int(r, 0);
    freeReplyObject(r);
    return n;
}

int jointoken_verify(struct rconn *rc, const char *server_secret, const struct token *t)
{
    char key[160], mac[SECRET_MAC_HEX];
    const char *stored, *expires, *revoked;
    redisReply *r;
    int ok;

    snprintf(key, sizeof(key), K_JOINTOKEN, t->ws, t->id);
    r = rconn_cmd(rc, 0, "HMGET %s mac expires_at revoked", key);
    if (!r)
        return -1;
    secret_mac_hex(server_secret, t->secret, mac);
    stored = reply_str(r->element[0]);
    expires = reply_str(r->element[1]);
    revoked = reply_str(r->element[2]);
    ok = stored && secret_equal(stored, mac) && expires &&
         strtoll(expires, NULL, 10) > clock_now_ms() && !(revoked && strcmp(revoked, "1") == 0);
    freeReplyObject(r);
    return ok;
}

int workspace_ids(struct rconn *rc, struct id_list *out)
{
    return id_list_from_reply(rconn_cmd(rc, 0, "SMEMBERS " K_WORKSPACES), out);
}
