#include "volume.h"
#include "volume_store.h"

#include "scheduler.h"

#include "audit.h"
#include "clock.h"
#include "commands.h"
#include "placement.h"
#include "sandbox_store.h"
#include "secret.h"
#include "worker_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The worker a volume goes to: never an agent (its sessions cannot mount a
 * Docker volume: decision 0054), which placement may otherwise prefer as the
 * workspace's own. One agent is passed over; a second is refused. */
static int peek_docker_worker(struct rconn *rc, const char *ws, struct placement_need *need,
                              struct placement *p, struct sched_error *err)
{
    char agent[33] = "";
    const char *was = need->exclude; /* put back on return: agent is gone then */
    int got = -2;

    for (int i = 0; i < 2 && got == -2; i++) {
        if (placement_peek(rc, ws, need, p, err) != 0)
            got = -1;
        else if (strcmp(p->runtime, AGENT_RUNTIME_NAME) != 0)
            got = 0;
        else {
            snprintf(agent, sizeof(agent), "%s", p->wid);
            need->exclude = agent;
        }
    }
    need->exclude = was;
    if (got == -2)
        sched_error_set(err, 503, "no worker that can hold a volume (agent-mode workers cannot)");
    return got == 0 ? 0 : -1;
}

/* The worker is chosen first, then the name claimed (volume_store_add). */
int volume_create(struct rconn *rc, const struct sched_conf *c, const char *ws, const char *name,
                  const char *actor, struct volume_record *out, struct sched_error *err)
{
    struct placement_need need = {.template_id = "",
                                  .exclude = "",
                                  .fleet_share = c->fleet_share,
                                  .pin_pool = "",
                                  .pin_worker = ""};
    struct placement p;
    char hex[21];
    int claimed;

    if (peek_docker_worker(rc, ws, &need, &p, err) != 0)
        return -1;
    if (secret_random_hex(hex, 10) != 0) {
        sched_error_set(err, 500, "no randomness for a volume id");
        return -1;
    }
    memset(out, 0, sizeof(*out));
    snprintf(out->id, sizeof(out->id), "vol-%s", hex);
    snprintf(out->name, sizeof(out->name), "%s", name);
    snprintf(out->pool, sizeof(out->pool), "%s", p.pool);
    snprintf(out->worker, sizeof(out->worker), "%s", p.wid);
    out->created_at = (long long)clock_now_ms();
    claimed = volume_store_add(rc, ws, out);
    if (claimed != 1) {
        sched_error_set(err, claimed == 0 ? 409 : 503,
                        claimed == 0 ? "name: a volume named '%s' exists already"
                                     : "state store unavailable%.0s",
                        name);
        return -1;
    }
    audit_append(rc, ws,
                 &(struct audit_event){.event = AUDIT_VOLUME_CREATED,
                                       .actor = actor,
                                       .worker = out->worker,
                                       .reason = out->id});
    return 0;
}

/* 1 when a live sandbox of ws mounts docker volume dname, -1 Redis. */
static int in_use(struct rconn *rc, const char *ws, const char *dname)
{
    struct sandbox_list all;
    char quoted[80];
    int used = 0;

    if (sandbox_list_read(rc, ws, SANDBOX_STATE_ANY, &all) != 0)
        return -1;
    snprintf(quoted, sizeof(quoted), "\"%s\"", dname);
    for (size_t i = 0; i < all.n; i++) {
        const struct sandbox_record *s = &all.items[i];
        int live = sandbox_is_live(s) || s->state == SANDBOX_STATE_PENDING;
        used |= live && strstr(s->volumes, quoted) != NULL;
    }
    sandbox_list_free(&all);
    return used;
}

int volume_delete(struct rconn *rc, const char *ws, const char *id, const char *actor)
{
    struct volume_record v;
    char dname[64];
    int found = volume_read(rc, ws, id, &v), used;

    if (found != 1)
        return found;
    volume_docker_name(id, dname, sizeof(dname));
    if ((used = in_use(rc, ws, dname)) != 0)
        return used < 0 ? -1 : 2;
    found = volume_store_remove(rc, ws, &v);
    if (found != 1)
        return found; /* -1, or 0: another delete won */
    audit_append(
        rc, ws,
        &(struct audit_event){
            .event = AUDIT_VOLUME_REMOVED, .actor = actor, .worker = v.worker, .reason = id});
    if (worker_is_alive(rc, v.pool, v.worker) == 1)
        command_send_args(rc, v.pool, v.worker, "volume_remove", "",
                          json_pack("{s:s, s:s}", "volume", dname, "workspace", ws));
    return 1;
}

/* One mount {name, path}: its volume, which must be on the pool and worker
 * by the first one). 0, or -1 with err. */
static int resolve_one(struct rconn *rc, const char *ws, const json_t *m, char *pool, char *worker,
                       json_t *out, struct sched_error *err)
{
    const char *name = json_string_value(json_object_get(m, "name"));
    char id[VOLUME_ID_MAX], dname[64];
    struct volume_record v;
    int found = volume_id_of(rc, ws, name, id);

    if (found == 1)
        found = volume_read(rc, ws, id, &v);
    if (found < 0) {
        sched_error_set(err, 503, "state store unavailable");
        return -1;
    }
    if (found == 0) {
        sched_error_set(err, 404, "volumeMounts: volume '%s' not found", name);
        return -1;
    }
    if (*worker && strcmp(worker, v.worker) != 0) {
        sched_error_set(err, 409,
                        "volumeMounts: volume '%s' is on another worker than the sandbox's "
                        "other volumes or snapshot; a sandbox runs where they all are",
                        name);
        return -1;
    }
    snprintf(pool, 33, "%s", v.pool);
    snprintf(worker, 33, "%s", v.worker);
    volume_docker_name(v.id, dname, sizeof(dname));
    json_array_append_new(out, json_pack("{s:s, s:O, s:s}", "volume", dname, "path",
                                         json_object_get(m, "path"), "name", name));
    return 0;
}

int volume_resolve(struct rconn *rc, const char *ws, struct sandbox_spec *spec,
                   struct sched_error *err)
{
    json_t *mounts = spec->mounts_json ? json_loads(spec->mounts_json, 0, NULL) : NULL, *m;
    json_t *out = json_array();
    size_t i;
    int rv = 0;

    json_array_foreach(mounts, i, m)
    {
        if (rv == 0)
            rv = resolve_one(rc, ws, m, spec->pin_pool, spec->pin_worker, out, err);
    }
    json_decref(mounts);
    if (rv == 0 && json_array_size(out) > 0) {
        free(spec->volumes_json);
        spec->volumes_json = json_dumps(out, JSON_COMPACT);
        if (!spec->volumes_json) {
            sched_error_set(err, 500, "out of memory");
            rv = -1;
        }
    }
    json_decref(out);
    return rv;
}
