#include "route.h"

#include "sandbox_store.h"

#include <stdio.h>
#include <string.h>

/* The sandbox half: running, and on which worker; then the worker half. */
static int route_of(struct rconn *rc, const struct sandbox_record *sb, struct route *out)
{
    if (!sandbox_is_running(sb)) {
        if (!sandbox_is_paused(sb) && sb->state != SANDBOX_STATE_RESUMING &&
            sb->state != SANDBOX_STATE_PAUSING)
            return 0;
        /* Paused without its memory: resumed only when asked (decision 0074). */
        return sb->auto_resume && sb->paused_memory ? 2 : ROUTE_PAUSED;
    }
    out->secure = sb->secure;
    out->public = sb->public_traffic;
    snprintf(out->mask_host, sizeof(out->mask_host), "%s", sb->mask_host ? sb->mask_host : "");
    return worker_route(rc, sb->pool, sb->worker, &out->worker);
}

int route_lookup(struct rconn *rc, const char *sbid, struct route *out)
{
    char ws[33];
    struct sandbox_record sb;
    int found = sandbox_workspace_of(rc, sbid, ws);

    memset(out, 0, sizeof(*out));
    if (found <= 0)
        return found;
    snprintf(out->ws, sizeof(out->ws), "%s", ws);
    found = sandbox_read(rc, ws, sbid, &sb);
    if (found <= 0)
        return found;
    found = route_of(rc, &sb, out);
    sandbox_record_free(&sb);
    return found;
}
