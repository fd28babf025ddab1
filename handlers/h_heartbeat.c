/* POST /v1/worker/heartbeat: the long-poll of the control channel.
 *
 * Delivery protocol: commands sit in the worker's stream; reading them through
 * the consumer group moves them to the pending list, where they stay until the
 * worker acknowledges them in a later heartbeat. So a command is re-delivered
 * (a) on the first poll after a handshake ("resume") — the worker crashed or
 * restarted — and (b) whenever it has stayed unacknowledged for 10 s, whichever
 * handler thread or process serves that poll. Workers apply idempotently.
 *
 * Long-polls and starvation: a blocked poll holds a handler thread. At most
 * longpoll_max polls block at once per process (below `threads`, enforced at
 * start-up); a poll over that budget answers at once with retry_after_ms, so
 * the other threads always remain for API requests. */
#include "clock.h"
#include "command_poll.h"
#include "commands.h"
#include "egress_seal.h"
#include "env_seal.h"
#include "handlers.h"
#include "heartbeat_parse.h"
#include "lifecycle.h"
#include "log.h"
#include "respond.h"
#include "sandbox_token.h"
#include "snapshot.h"
#include "worker_registry.h"
#include "worker_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REDELIVER_IDLE_MS 10000

/* The lease, and what the worker says stops it taking sandboxes ("" when
 * nothing does; NULL: not said, unchanged): placement passes over a worker
 * that names a problem. */
/* The lease, the worker's problem and its warm pools (checked: heartbeat_parse.c). */
static int renew_lease(struct request *req, const char *wid, json_t *body)
{
    json_t *warm = json_object_get(body, "warm");
    char *warm_json = warm ? json_dumps(warm, JSON_COMPACT) : NULL, ready[HEARTBEAT_WARM_READY_LEN];
    int rc;

    heartbeat_warm_ready(warm, ready);
    rc = worker_renew(req->rc, req->cred.ws, wid, clock_now_ms() + req->conf->lease_ms,
                      json_string_value(json_object_get(body, "problem")), warm_json, ready);

    free(warm_json);
    return rc;
}

static int apply_acks(struct request *req, const char *wid, const json_t *acks)
{
    for (size_t i = 0; i < json_array_size(acks); i++) {
        const char *id = json_string_value(json_array_get(acks, i));
        if (command_ack(req->rc, req->cred.ws, wid, id) != 0)
            return -1;
    }
    return 0;
}

/* A worker of a workspace's own pool only ever holds that workspace's. */
static void apply_snapshot_reports(struct request *req, const char *wid, const json_t *snaps)
{
    size_t i;
    json_t *v;

    json_array_foreach(snaps, i, v)
    {
        const char *ws = json_string_value(json_object_get(v, "workspace"));
        const char *reason = json_string_value(json_object_get(v, "reason"));
        if (*req->cred.ws && strcmp(ws, req->cred.ws) != 0)
            continue;
        snapshot_worker_report(req->rc, ws, wid, json_string_value(json_object_get(v, "id")),
                               json_string_value(json_object_get(v, "state")),
                               reason ? reason : "");
    }
}

/* A slot younger than a create's wait may belong to a create the worker has
 * not been given yet (placed while this report was on its way, or while the
 * poll it follows failed): the report cannot speak for it. Such a create
 * still ends within the wait, running or killed by the create path. */
static int young_slot(const struct request *req, const struct worker_sandbox *e)
{
    return e->valid && clock_now_ms() - e->slot.since_ms < req->conf->create_timeout_ms;
}

/* Kills this worker has done: their callers wait (decision 0073). Keyed by
 * the authenticated worker, so a worker can only wake the kills it was sent. */
static void apply_killed(struct request *req, const char *wid, const json_t *killed)
{
    size_t i;
    json_t *v;

    json_array_foreach(killed, i, v)
    {
        command_kill_done(req->rc, req->cred.ws, wid, json_string_value(v));
    }
}

/* The sandboxes a report got killed are added to kills (when given). */
static void apply_reports(struct request *req, const char *wid, const json_t *sbs, int full,
                          json_t *kills)
{
    size_t i;
    json_t *v;
    struct worker_sandboxes mine;

    json_array_foreach(sbs, i, v)
    {
        const char *reason = json_string_value(json_object_get(v, "reason"));
        const char *sbid = json_string_value(json_object_get(v, "id"));
        if (lifecycle_report(req->rc, req->cred.ws, wid, sbid,
                             json_string_value(json_object_get(v, "state")),
                             reason ? reason : "") == 1 &&
            kills)
            json_array_append_new(kills, json_string(sbid));
    }
    /* A full report that omits a sandbox we think runs there: it is gone. */
    if (!full || worker_sandboxes(req->rc, req->cred.ws, wid, &mine) != 0)
        return;
    for (size_t k = 0; k < mine.n; k++) {
        int listed = young_slot(req, &mine.v[k]);
        json_array_foreach(sbs, i, v) listed |=
            strcmp(json_string_value(json_object_get(v, "id")), mine.v[k].sbid) == 0;
        if (!listed)
            lifecycle_report(req->rc, req->cred.ws, wid, mine.v[k].sbid, "missing",
                             "not found on the worker");
    }
    worker_sandboxes_free(&mine);
}

/* A create's env vars are sealed in Redis (common/env_seal.h): opened here,
 * just before they go to the worker over TLS. One that does not open (the
 * secret changed, or the stream was altered) is never delivered: the command
 * is dropped and the sandbox fails, naming why. 0 delivered, -1 dropped. */
static int open_env(struct request *req, const char *wid, const char *entry, json_t *sb)
{
    const char *sealed = json_string_value(json_object_get(sb, "env_sealed"));
    const char *sbid = json_string_value(json_object_get(sb, "id"));
    char *plain;
    json_t *env;

    if (!sealed)
        return 0;
    plain = sbid ? env_open(req->conf->server_secret, sbid, sealed) : NULL;
    env = plain ? json_loads(plain, 0, NULL) : NULL;
    free(plain);
    json_object_del(sb, "env_sealed");
    if (json_is_object(env))
        return json_object_set_new(sb, "env", env) == 0 ? 0 : -1;
    json_decref(env);
    log_sandbox("error", sbid, NULL, "create: its env vars do not open (secret_file changed?)");
    command_ack(req->rc, req->cred.ws, wid, entry);
    if (sbid)
        lifecycle_report(req->rc, req->cred.ws, wid, sbid, "failed",
                         "its env vars could not be decrypted");
    return -1;
}

/* The egress policy's secrets (egress_seal.h), sealed in Redis to its
 * workspace, opened here as the env vars are. obj is a create's sandbox or a
 * command's args, carrying "egress" and "workspace". One that does not open
 * drops the command: a proxy never runs with a policy it cannot enforce. 0,
 * or -1 (the command acknowledged, the sandbox failed). */
static int open_egress(struct request *req, const char *wid, const char *entry, const char *sbid,
                       json_t *obj)
{
    json_t *policy = json_object_get(obj, "egress");
    const char *ws = json_string_value(json_object_get(obj, "workspace"));

    if (!json_is_object(policy) || (ws && egress_open(req->conf->server_secret, ws, policy) == 0))
        return 0;
    log_sandbox("error", sbid, NULL, "its egress policy's secrets do not open");
    command_ack(req->rc, req->cred.ws, wid, entry);
    if (sbid && ws)
        lifecycle_report(req->rc, req->cred.ws, wid, sbid, "failed",
                         "its egress policy's secrets could not be decrypted");
    return -1;
}

/* 1 when the sandbox's record says it is secure and placed on this worker, 0
 * when it does not (gone, or moved), -1 Redis. So a create written onto a
 * stream by anyone but the scheduler never draws another sandbox's token. */
static int placed_here_secure(struct request *req, const char *wid, const json_t *sb)
{
    const char *ws = json_string_value(json_object_get(sb, "workspace"));
    const char *sbid = json_string_value(json_object_get(sb, "id"));
    struct sandbox_record rec;
    int found, ok;

    if (!ws || !sbid)
        return 0;
    found = sandbox_read(req->rc, ws, sbid, &rec);
    if (found < 0)
        return -1;
    ok = found == 1 && rec.secure && strcmp(rec.pool, req->cred.ws) == 0 &&
         strcmp(rec.worker, wid) == 0;
    sandbox_record_free(&rec);
    return ok;
}

/* A secure sandbox's envd access token is never in Redis (decision 0067): the
 * stored create says only that one is due, and it is derived here, from the
 * gateway secret this process holds, into the answer that goes to the
 * authenticated worker over TLS. The worker gets what it always got. A create
 * whose sandbox is no longer this worker's is dropped (it would be killed
 * anyway; without its token envd would be open). 0 delivered, 1 left for a
 * later poll (Redis failed), -1 dropped. */
static int add_envd_token(struct request *req, const char *wid, const char *entry, json_t *sb)
{
    const char *sbid = json_string_value(json_object_get(sb, "id"));
    char token[SECRET_MAC_HEX];
    int here;

    if (!json_object_get(sb, CMD_ENVD_TOKEN_DUE))
        return 0;
    here = placed_here_secure(req, wid, sb);
    if (here < 0)
        return 1;
    json_object_del(sb, CMD_ENVD_TOKEN_DUE);
    if (here == 0) {
        log_sandbox("info", sbid, NULL, "create: not placed on this worker any more; dropped");
        command_ack(req->rc, req->cred.ws, wid, entry);
        return -1;
    }
    sandbox_token(req->conf->gateway_secret, SANDBOX_TOKEN_ENVD, sbid, token);
    json_object_set_new(sb, "envd_access_token", json_string(token));
    return 0;
}

/* The commands as the worker gets them; a batch's rv passes through. */
static int append_commands(struct request *req, const char *wid, struct command_batch *b, int rv,
                           json_t *out)
{
    for (size_t i = 0; i < b->n; i++) {
        const struct command *c = &b->v[i];
        json_t *cmd = json_pack("{s:s, s:s}", "id", c->id, "type", c->type);
        if (c->sandbox) {
            json_t *sb = json_loads(c->sandbox, 0, NULL);
            if (sb && (open_env(req, wid, c->id, sb) != 0 ||
                       open_egress(req, wid, c->id, json_string_value(json_object_get(sb, "id")),
                                   sb) != 0 ||
                       add_envd_token(req, wid, c->id, sb) != 0)) {
                json_decref(sb);
                json_decref(cmd);
                continue;
            }
            json_object_set_new(cmd, "sandbox", sb);
        }
        if (c->sandbox_id[0])
            json_object_set_new(cmd, "sandbox_id", json_string(c->sandbox_id));
        if (c->args) {
            json_t *args = json_loads(c->args, 0, NULL);
            if (open_egress(req, wid, c->id, c->sandbox_id[0] ? c->sandbox_id : NULL, args) != 0) {
                json_decref(args);
                json_decref(cmd);
                continue;
            }
            json_object_set_new(cmd, "args", args);
        }
        json_array_append_new(out, cmd);
    }
    command_batch_free(b);
    return rv;
}

static int collect_commands(struct request *req, const char *wid, int resume, int wait, json_t *out,
                            int *over_budget)
{
    struct server *srv = req->thread->srv;
    struct command_batch b = {0};
    const char *ws = req->cred.ws;
    int rv;

    rv = resume ? command_read(req->rc, ws, wid, "0", &b)
                : command_reclaim(req->rc, ws, wid, REDELIVER_IDLE_MS, &b);
    if (append_commands(req, wid, &b, rv, out) != 0)
        return -1;
    if (json_array_size(out) > 0)
        return 0;
    if (!wait) /* a worker with work in hand reports without waiting */
        return append_commands(req, wid, &b, command_read(req->rc, ws, wid, ">", &b), out);
    if (atomic_fetch_add(&srv->longpolls, 1) >= srv->conf.longpoll_max) {
        atomic_fetch_sub(&srv->longpolls, 1);
        *over_budget = 1;
        return append_commands(req, wid, &b, command_read(req->rc, ws, wid, ">", &b), out);
    }
    rv = command_wait(req->rc, ws, wid, req->conf->poll_ms, &b);
    atomic_fetch_sub(&srv->longpolls, 1);
    return append_commands(req, wid, &b, rv, out);
}

/* The kills a report just sent go back in its own answer, ahead of the
 * rest: sent on the stream, they would go to the worker's long-poll in
 * flight instead (decision 0084), and a create that poll brought before
 * would be applied first, refused for the slot a stray found in this very
 * report still holds (tests/workerd/restart). Id-less: the stream's own
 * kill, acknowledged as every command, follows; a kill is idempotent. One
 * the stream already put in this answer is not added twice. */
static json_t *with_report_kills(json_t *cmds, const json_t *kills)
{
    size_t i, k;
    json_t *sbid, *c;

    json_array_foreach(kills, i, sbid)
    {
        int sent = 0;
        json_array_foreach(cmds, k, c) sent |=
            json_equal(json_object_get(c, "sandbox_id"), sbid) &&
            strcmp(json_string_value(json_object_get(c, "type")) ?: "", "kill") == 0;
        if (!sent)
            json_array_insert_new(cmds, 0,
                                  json_pack("{s:s, s:O}", "type", "kill", "sandbox_id", sbid));
    }
    return cmds;
}

void h_worker_heartbeat(struct request *req)
{
    char wid[33], err[256];
    json_t *body = request_json_body(req), *cmds, *kills;
    int over_budget = 0;

    /* Every worker polls all the time; what a heartbeat changes is logged
     * where it changes (lifecycle.c), its errors by request_log. */
    req->quiet = 1;
    if (!body)
        return;
    if (heartbeat_body_check(body, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        json_decref(body);
        return;
    }
    if (worker_authenticate(req, wid) != 1 || renew_lease(req, wid, body) != 0) {
        if (!req->responded)
            respond_store_down(req);
        json_decref(body);
        return;
    }
    if (json_is_true(json_object_get(body, "report_only"))) {
        /* A death reported beside the long-poll: no acks, no commands. */
        apply_killed(req, wid, json_object_get(body, "killed"));
        apply_reports(req, wid, json_object_get(body, "sandboxes"), 0, NULL);
        respond_json(req, 200, json_pack("{s:[]}", "commands"));
        json_decref(body);
        return;
    }
    apply_snapshot_reports(req, wid, json_object_get(body, "snapshots"));
    apply_killed(req, wid, json_object_get(body, "killed"));
    cmds = json_array();
    kills = json_array();
    if (apply_acks(req, wid, json_object_get(body, "acks")) != 0 ||
        (apply_reports(req, wid, json_object_get(body, "sandboxes"),
                       json_is_true(json_object_get(body, "full")), kills),
         collect_commands(req, wid, json_is_true(json_object_get(body, "resume")),
                          !json_is_false(json_object_get(body, "wait")), cmds,
                          &over_budget) != 0)) {
        json_decref(cmds);
        respond_store_down(req);
    } else if (over_budget && json_array_size(cmds) == 0 && json_array_size(kills) == 0) {
        respond_json(req, 200, json_pack("{s:o, s:i}", "commands", cmds, "retry_after_ms", 1000));
    } else {
        respond_json(req, 200, json_pack("{s:o}", "commands", with_report_kills(cmds, kills)));
    }
    json_decref(kills);
    json_decref(body);
}
