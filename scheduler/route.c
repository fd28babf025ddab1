#include "route.h"

#include "keys.h"
#include "sandbox_store.h"

#include <stdio.h>
#include <string.h>

/* The workspace a sandbox id belongs to, from the index the data plane keeps
 * (ids are global, records live in their workspace's slot). 1, 0 none, -1.
 * To move into sandbox_store.c with the rest of the sandbox record (issue 10). */
static int sandbox_workspace(struct rconn *rc, const char *sbid, char ws[33])
{
    char key[96];
    redisReply *r;
    int found;

    snprintf(key, sizeof(key), K_SB_INDEX, sbid);
    r = rconn_cmd(rc, 0, "GET %s", key);
    if (!r)
        return -1;
    found = reply_str(r) != NULL;
    if (found)
        snprintf(ws, 33, "%s", reply_str(r));
    freeReplyObject(r);
    return found;
}

/* The sandbox half: running, and on which worker; then the worker half. */
static int route_of(struct rconn *rc, const redisReply *sb, struct route *out)
{
    const char *state = reply_hget(sb, "state"), *pool = reply_hget(sb, "pool");
    const char *wid = reply_hget(sb, "worker");
    const char *secure = reply_hget(sb, "secure"), *public = reply_hget(sb, "public");

    if (!state || strcmp(state, "running") != 0)
        return 0;
    out->secure = secure && strcmp(secure, "1") == 0;
    out->public = !public || strcmp(public, "0") != 0;
    return worker_route(rc, pool ? pool : "", wid ? wid : "", &out->worker);
}

int route_lookup(struct rconn *rc, const char *sbid, struct route *out)
{
    char ws[33];
    redisReply *sb;
    int found = sandbox_workspace(rc, sbid, ws), absent = 0;

    memset(out, 0, sizeof(*out));
    if (found <= 0)
        return found;
    sb = sandbox_get(rc, ws, sbid, &absent);
    if (!sb)
        return absent ? 0 : -1;
    found = route_of(rc, sb, out);
    freeReplyObject(sb);
    return found;
}
