/* commands.h: the commands the control plane sends a worker.
 *
 * A command is a JSON object as the heartbeat's answer brings it. Its "type"
 * is decoded once, when that answer arrives (commands_arrived), into an enum
 * kept beside it (CMD_FIELD); from then on only the enum is compared. The
 * wire names are store/commands.c's, byte for byte. */
#ifndef WORKERD_COMMANDS_H
#define WORKERD_COMMANDS_H

#include <jansson.h>

enum worker_cmd {
    CMD_UNKNOWN, /* no type, or one a newer control plane sends */
    CMD_CREATE,
    CMD_KILL,
    CMD_PAUSE,
    CMD_RESUME,
    CMD_SNAPSHOT,
    CMD_VOLUME_REMOVE,
    CMD_IMAGE_REMOVE,
    CMD_TEMPLATE_REMOVE,
    CMD_EGRESS, /* a live network update (decision 0091) */
    CMD_COUNT   /* how many: not a command */
};

/* The command a type names; CMD_UNKNOWN for NULL or any other string. */
enum worker_cmd command_decode(const char *type);
/* The wire name of c; NULL for CMD_UNKNOWN. */
const char *command_name(enum worker_cmd c);
/* The command cmd was decoded as on arrival (CMD_UNKNOWN when it was not). */
enum worker_cmd command_of(const json_t *cmd);

/* Where the decoded type is kept on a command, and when it arrived on each
 * create's sandbox (clock_now_ms()): its log line tells how long it waited
 * here before dockerd was asked, apart from dockerd's own phases. Neither
 * field is the control plane's. */
#define CMD_FIELD "worker_cmd"
#define ARRIVED_FIELD "worker_arrived_ms"
/* When the control plane queued a create (its stream entry's id, Redis's
 * clock, ms since the epoch): the create's log line shows its delivery, so a
 * benchmark can tell each hop of the create path (issue 35). */
#define QUEUED_FIELD "worker_queued_ms"
/* Every command of cmds as it arrives: its type decoded, a create's
 * arrival (and queueing) noted. */
void commands_arrived(json_t *cmds);

#endif
