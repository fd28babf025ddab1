/* netsweep.c: a sandbox's network that outlived its sandbox is removed.
 *
 * A kill removes a sandbox's networks after its containers, but dockerd may
 * not do it: asked while it shuts down, it answers 500 or lists no network
 * at all, and the network is back from its store once it restarts (the
 * dockerd_restart test found a policy sandbox's internal network so). Such a
 * network holds an address range and a bridge until someone removes it. */
#include "netsweep.h"
#include "containers.h"
#include "egress_pool.h"
#include "warm_pool.h"
#include "log.h"

#include <string.h>

static const char *sandbox_label(json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "Labels"), "corral.sandbox"));
}

/* The pools keep (and sweep) their own: a ready proxy's network has no
 * container labelled with its id, a warm one's is its claimed sandbox's. */
static int pools_own(const char *id)
{
    return strncmp(id, EGRESS_POOL_PREFIX, strlen(EGRESS_POOL_PREFIX)) == 0 ||
           strncmp(id, WARM_PREFIX, strlen(WARM_PREFIX)) == 0;
}

/* The sandbox ids some container of this worker (of any state) carries. */
static json_t *held_ids(struct docker *d, const char *wid)
{
    json_t *ctrs = containers_list_own(d, "containers/json", "all=1&", wid, NULL);
    json_t *held = ctrs ? json_object() : NULL, *o;
    size_t i;

    json_array_foreach(ctrs, i, o)
    {
        const char *id = sandbox_label(o);
        if (id)
            json_object_set_new(held, id, json_true());
    }
    json_decref(ctrs);
    return held;
}

int netsweep_orphans(struct docker *d, const char *wid)
{
    /* Networks first: a create makes its network before its container, so
     * one listed here whose container is not listed next is an orphan. */
    json_t *nets = containers_list_own(d, "networks", "", wid, "sandbox");
    json_t *held = nets ? held_ids(d, wid) : NULL, *o;
    char err[256];
    int left = 0;
    size_t i;

    if (!held) {
        json_decref(nets);
        return -1;
    }
    (void)containers_networks_refused(); /* from here on, this sweep's own */
    json_array_foreach(nets, i, o)
    {
        const char *id = sandbox_label(o);
        if (!id || pools_own(id) || json_object_get(held, id))
            continue;
        if (containers_kill(d, wid, id, err, sizeof(err)) != 0 || containers_networks_refused())
            left++; /* dockerd still refuses: the next reconcile tries again */
        else
            log_sandbox("info", id, NULL, "its network outlived it: removed");
    }
    json_decref(nets);
    json_decref(held);
    return left > 0 ? -1 : 0;
}
