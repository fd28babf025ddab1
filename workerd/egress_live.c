/* egress_live.c: a network update put in force while the sandbox runs
 * (decision 0091): the proxy's config is written anew and the proxy told
 * (SIGHUP) to read it again. New connections follow the new policy; those
 * already open keep the one they were opened under. The sandbox itself is
 * not touched: its network, its CA and its variables stay. */
#include "worker.h"

#include "egress_dir.h"
#include "egress_proxy.h"
#include "log.h"

#include <stdio.h>
#include <unistd.h>

#define HUP_TIMEOUT_MS 10000L

int apply_egress_update(struct worker *w, struct docker *dk, const char *sbid, json_t *args)
{
    json_t *policy = json_object_get(args, "egress"), *ans = NULL;
    char dir[WCONF_STR + 160], name[256], path[320], err[256];
    long status = 0;

    if (!sbid || !json_is_object(policy))
        return 0;
    egress_dir_of(w->conf, sbid, dir, sizeof(dir));
    if (access(dir, F_OK) != 0) { /* no proxy here: nothing to change */
        log_sandbox("warn", sbid, NULL, "network update: it has no egress proxy on this worker");
        return 0;
    }
    if (egress_dir_write(w->conf, sbid, policy, err, sizeof(err)) != 0) {
        log_sandbox("error", sbid, NULL, "network update: %s", err);
        return 0;
    }
    egress_proxy_name(name, sizeof(name), sbid, w->id.worker_id);
    snprintf(path, sizeof(path), "/containers/%s/kill?signal=HUP", name);
    if (docker_call(dk, "POST", path, NULL, HUP_TIMEOUT_MS, &status, &ans, err, sizeof(err)) != 0)
        return -1;
    if (status != 204)
        log_sandbox("warn", sbid, NULL, "network update: its proxy was not told: %s",
                    docker_errmsg(ans, status));
    else
        log_sandbox("info", sbid, NULL, "network update applied to its egress proxy");
    json_decref(ans);
    return 0;
}
