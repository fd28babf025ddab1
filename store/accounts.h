/* accounts.h: workspaces, API keys and join tokens — created by corralctl and by
 * owners through corral-api, so the one implementation lives here. */
#ifndef CORRAL_ACCOUNTS_H
#define CORRAL_ACCOUNTS_H

#include "id_list.h"
#include "rconn.h"
#include "token.h"

#include <stdint.h>

#define ACCOUNTS_MAX_CONCURRENT_MAX 100000 /* the range's top; the operator's ceiling is lower */

/* A workspace's limits, changed by its owner (PATCH /v1/workspace): the one
 * table of their API names, Redis fields, ranges, defaults and the corral.conf
 * keys of the operator's ceilings over them (the default concurrency limit is
 * ws_limit_defs[WS_LIMIT_MAX_CONCURRENT].dflt, nowhere else). */
enum ws_limit {
    WS_LIMIT_MAX_CONCURRENT,
    WS_LIMIT_PIDS,
    WS_LIMIT_DISK_MB,
    WS_LIMIT_TIMEOUT, /* a native create's timeout when it names none (decision 0044) */
    WS_LIMIT_COUNT
};
struct ws_limit_def {
    const char *name;  /* in the API */
    const char *field; /* in the workspace's Redis hash */
    long min, max, dflt;
    /* The operator's ceiling (decision 0063): the most an owner may set, and
     * what a value stored before the ceiling was lowered is capped at. A
     * ceiling's own range is [max(1, min), max]. */
    const char *ceiling_key; /* in corral.conf */
    long ceiling_dflt;       /* a production default */
};
extern const struct ws_limit_def ws_limit_defs[WS_LIMIT_COUNT];

/* Is value allowed for limit i? Its range, then the operator's ceiling for it.
 * 0, or -1 with err naming the field and the bound (and the ceiling's key). */
int ws_limit_check(enum ws_limit i, long long value, long ceiling, char *err, size_t errlen);

/* Caps each limit at its ceiling: what a workspace gets, whatever it stored
 * before the operator lowered a ceiling. */
void ws_limits_cap(long limits[WS_LIMIT_COUNT], const long ceilings[WS_LIMIT_COUNT]);

enum role { ROLE_NONE = 0, ROLE_MEMBER = 1, ROLE_OWNER = 2 };

const char *role_name(enum role r);
enum role role_parse(const char *s); /* ROLE_NONE when neither "owner" nor "member" */

/* All return 0 on success, -1 when Redis failed. */
int workspace_create(struct rconn *rc, const char *name, char ws_out[TOKEN_WS_MAX]);
/* Every workspace id. 0, or -1. */
int workspace_ids(struct rconn *rc, struct id_list *out);
int workspace_exists(struct rconn *rc, const char *ws); /* 1, 0, or -1 */
/* The workspace's name and limits (the default where unset). 0, or -1. */
int workspace_info(struct rconn *rc, const char *ws, char *name, size_t namelen,
                   long limits[WS_LIMIT_COUNT]);
/* Stores limits[i] for every i with set[i]; the caller checked the ranges. 0, or -1. */
int workspace_limits_set(struct rconn *rc, const char *ws, const long limits[WS_LIMIT_COUNT],
                         const int set[WS_LIMIT_COUNT]);

int apikey_create(struct rconn *rc, const char *server_secret, const char *ws, enum role role,
                  char id_out[TOKEN_ID_MAX], char token_out[TOKEN_TEXT_MAX]);
int apikey_delete(struct rconn *rc, const char *ws, const char *id); /* 1 deleted, 0 absent */
/* Checks a parsed API key; sets *role. 1 valid, 0 invalid, -1 Redis failed. */
int apikey_verify(struct rconn *rc, const char *server_secret, const struct token *t,
                  enum role *role);

int jointoken_create(struct rconn *rc, const char *server_secret, const char *ws, long ttl_s,
                     char id_out[TOKEN_ID_MAX], char token_out[TOKEN_TEXT_MAX],
                     int64_t *expires_ms);
/* The workspace a join token id belongs to ("" the unscoped fleet). 1, 0 unknown, -1. */
int jointoken_workspace(struct rconn *rc, const char *id, char ws[TOKEN_WS_MAX]);
/* Revokes by id; ws NULL means "look the workspace up" (operator CLI). 1, 0 absent, -1. */
int jointoken_revoke(struct rconn *rc, const char *ws, const char *id);
/* 1 valid, 0 unknown/expired/revoked, -1 Redis failed. */
int jointoken_verify(struct rconn *rc, const char *server_secret, const struct token *t);

#endif
