/* commands.c: the command table: each command's wire name and what applies
 * it, in one place, as handlers/router.c routes requests.
 *
 * A command is acknowledged only once applied, so a crash between receiving
 * and applying means it comes again; applying is therefore idempotent by
 * sandbox id (apply.c). */
#include "worker.h"

#include "template_images.h"

#include "clock.h"
#include "log.h"

#include <string.h>

typedef int (*command_fn)(struct worker *w, struct docker *dk, json_t *cmd);

static int run_create(struct worker *w, struct docker *dk, json_t *cmd)
{
    return apply_create(w, dk, json_object_get(cmd, "sandbox"));
}

static int run_kill(struct worker *w, struct docker *dk, json_t *cmd)
{
    return apply_kill(w, dk, json_string_value(json_object_get(cmd, "sandbox_id")));
}

static int run_snapshot(struct worker *w, struct docker *dk, json_t *cmd)
{
    return apply_snapshot(w, dk, json_string_value(json_object_get(cmd, "sandbox_id")),
                          json_object_get(cmd, "args"));
}

static int run_volume_remove(struct worker *w, struct docker *dk, json_t *cmd)
{
    return apply_volume_remove(w, dk, json_object_get(cmd, "args"));
}

static int run_image_remove(struct worker *w, struct docker *dk, json_t *cmd)
{
    return apply_image_remove(w, dk, json_object_get(cmd, "args"));
}

/* A deleted template's local images (decision 0080): its registry
 * repository's names, unless a sandbox still runs on one. */
static int run_template_remove(struct worker *w, struct docker *dk, json_t *cmd)
{
    const char *repo =
        json_string_value(json_object_get(json_object_get(cmd, "args"), "repository"));
    char err[256];
    int removed, kept;

    (void)w;
    if (!repo || !strstr(repo, "/corral/")) /* only Corral's templates' names */
        return 0;
    if (template_images_remove(dk, repo, &removed, &kept, err, sizeof(err)) != 0)
        return -1;
    log_info("template %s: %d local names removed, %d in use kept", repo, removed, kept);
    return 0;
}

static int run_egress(struct worker *w, struct docker *dk, json_t *cmd)
{
    return apply_egress_update(w, dk, json_string_value(json_object_get(cmd, "sandbox_id")),
                               json_object_get(cmd, "args"));
}

/* agent: applied in agent mode too (decision 0054); the rest is refused. */
static const struct command {
    const char *name; /* the wire's */
    command_fn fn;
    enum worker_cmd cmd;
    int agent;
} commands[] = {
    {"create", run_create, CMD_CREATE, 1},
    {"kill", run_kill, CMD_KILL, 1},
    {"pause", apply_pause_command, CMD_PAUSE, 0},
    {"resume", apply_pause_command, CMD_RESUME, 0},
    {"snapshot", run_snapshot, CMD_SNAPSHOT, 0},
    {"volume_remove", run_volume_remove, CMD_VOLUME_REMOVE, 0},
    {"image_remove", run_image_remove, CMD_IMAGE_REMOVE, 0},
    {"template_remove", run_template_remove, CMD_TEMPLATE_REMOVE, 0},
    {"egress", run_egress, CMD_EGRESS, 0},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *lookup(enum worker_cmd c)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (commands[i].cmd == c)
            return &commands[i];
    return NULL;
}

enum worker_cmd command_decode(const char *type)
{
    for (size_t i = 0; type && i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, type) == 0)
            return commands[i].cmd;
    return CMD_UNKNOWN;
}

const char *command_name(enum worker_cmd c)
{
    const struct command *k = lookup(c);

    return k ? k->name : NULL;
}

enum worker_cmd command_of(const json_t *cmd)
{
    json_int_t c = json_integer_value(json_object_get(cmd, CMD_FIELD));

    return c > CMD_UNKNOWN && c < CMD_COUNT ? (enum worker_cmd)c : CMD_UNKNOWN;
}

void commands_arrived(json_t *cmds)
{
    size_t i;
    json_t *c;
    int64_t now = clock_now_ms();

    json_array_foreach(cmds, i, c)
    {
        json_t *sb = json_object_get(c, "sandbox");
        if (json_is_object(c))
            json_object_set_new(
                c, CMD_FIELD,
                json_integer(command_decode(json_string_value(json_object_get(c, "type")))));
        if (json_is_object(sb) && !json_object_get(sb, ARRIVED_FIELD)) {
            json_object_set_new(sb, ARRIVED_FIELD, json_integer(now));
            json_object_set_new(
                sb, QUEUED_FIELD,
                json_integer(clock_stream_id_ms(json_string_value(json_object_get(c, "id")))));
        }
    }
}

/* An agent session cannot be frozen, committed or given volumes (decision
 * 0054); the control plane refuses to ask, this is the backstop: a snapshot
 * is answered failed with the reason, a pause leaves it running, said so. */
static int agent_refuse(struct worker *w, const char *type, json_t *cmd)
{
    const char *sbid = json_string_value(json_object_get(cmd, "sandbox_id"));
    json_t *args = json_object_get(cmd, "args");
    const char *snap = json_string_value(json_object_get(args, "snapshot_id"));
    const char *ws = json_string_value(json_object_get(args, "workspace"));
    int snapshot = command_of(cmd) == CMD_SNAPSHOT;

    log_warn("agent mode: %s refused (a session on a person's machine cannot be %s)", type,
             snapshot ? "snapshotted" : "paused or hold volumes");
    if (snapshot && snap && ws && sbid)
        json_array_append_new(w->snap_reports,
                              json_pack("{s:s, s:s, s:s, s:s}", "id", snap, "workspace", ws,
                                        "state", "failed", "reason",
                                        "agent mode: a person's machine cannot be snapshotted"));
    return 0;
}

int apply_command_on(struct worker *w, struct docker *dk, json_t *cmd)
{
    const struct command *k = lookup(command_of(cmd));
    const char *type;

    if (k)
        return k->fn(w, dk, cmd);
    /* A command a newer control plane sends: acknowledge so it does not loop,
     * and say so. */
    type = json_string_value(json_object_get(cmd, "type"));
    log_warn("command type %s not supported; acknowledged without effect", type ? type : "(none)");
    return 0;
}

int apply_command(struct worker *w, json_t *cmd)
{
    const struct command *k = lookup(command_of(cmd));
    const char *type = json_string_value(json_object_get(cmd, "type"));

    if (w->conf->agent.on && type && (!k || !k->agent))
        return agent_refuse(w, type, cmd);
    return apply_command_on(w, &w->dk, cmd);
}
