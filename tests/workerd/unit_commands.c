/* Unit tests of the command table and the state codecs: every command's wire
 * name decodes to its enum and back, an unknown one is acknowledged without
 * effect (or, in agent mode, refused) exactly as before the table; every
 * sandbox state and dockerd state round trips, and a heartbeat's report
 * spells a state as the control plane expects it. */
#include "check.h"
#include "commands.h"
#include "states.h"
#include "stderr_capture.h"
#include "worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void unit_commands(int *total_passed, int *total_failed);

static int passed, failed;

/* store/commands.c's names, byte for byte. */
static const struct {
    enum worker_cmd cmd;
    const char *name;
} wire_cmds[] = {
    {CMD_CREATE, "create"},
    {CMD_KILL, "kill"},
    {CMD_PAUSE, "pause"},
    {CMD_RESUME, "resume"},
    {CMD_SNAPSHOT, "snapshot"},
    {CMD_VOLUME_REMOVE, "volume_remove"},
    {CMD_IMAGE_REMOVE, "image_remove"},
    {CMD_TEMPLATE_REMOVE, "template_remove"},
    {CMD_EGRESS, "egress"}, /* handlers/h_network.c */
};

static void test_command_names(void)
{
    size_t n = sizeof(wire_cmds) / sizeof(wire_cmds[0]);
    const char *unknown[] = {"", "Create", "kill ", "network", "volume", "frobnicate"};

    CHECK(n == CMD_COUNT - 1); /* every command is on the wire */
    for (size_t i = 0; i < n; i++) {
        CHECK(command_decode(wire_cmds[i].name) == wire_cmds[i].cmd);
        CHECK(command_name(wire_cmds[i].cmd) &&
              strcmp(command_name(wire_cmds[i].cmd), wire_cmds[i].name) == 0);
    }
    for (enum worker_cmd c = CMD_UNKNOWN + 1; c < CMD_COUNT; c++)
        CHECK(command_decode(command_name(c)) == c);
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
        CHECK(command_decode(unknown[i]) == CMD_UNKNOWN);
    CHECK(command_decode(NULL) == CMD_UNKNOWN);
    CHECK(command_name(CMD_UNKNOWN) == NULL && command_name(CMD_COUNT) == NULL);
}

/* Decoded once, on arrival; the control plane cannot set the field itself. */
static void test_commands_arrived(void)
{
    json_t *cmds = json_loads("[{\"type\":\"create\",\"sandbox\":{\"id\":\"a\"}},"
                              "{\"type\":\"kill\",\"sandbox_id\":\"a\",\"worker_cmd\":4},"
                              "{\"type\":\"frobnicate\"},{\"id\":\"1-0\"},\"kill\","
                              "{\"type\":7}]",
                              0, NULL);
    json_t *raw = json_pack("{s:s}", "type", "kill");

    CHECK(command_of(raw) == CMD_UNKNOWN); /* not decoded: nothing is assumed */
    commands_arrived(cmds);
    CHECK(command_of(json_array_get(cmds, 0)) == CMD_CREATE);
    CHECK(json_integer_value(json_object_get(json_object_get(json_array_get(cmds, 0), "sandbox"),
                                             ARRIVED_FIELD)) > 0);
    CHECK(command_of(json_array_get(cmds, 1)) == CMD_KILL);
    CHECK(command_of(json_array_get(cmds, 2)) == CMD_UNKNOWN);
    CHECK(command_of(json_array_get(cmds, 3)) == CMD_UNKNOWN);
    CHECK(command_of(json_array_get(cmds, 4)) == CMD_UNKNOWN);
    CHECK(command_of(json_array_get(cmds, 5)) == CMD_UNKNOWN);
    CHECK(command_of(NULL) == CMD_UNKNOWN);
    json_object_set_new(raw, CMD_FIELD, json_integer(CMD_COUNT));
    CHECK(command_of(raw) == CMD_UNKNOWN);
    json_decref(raw);
    json_decref(cmds);
}

struct unknown_run {
    struct worker *w;
    json_t *cmd;
    int rc;
};

static void run_unknown(void *arg)
{
    struct unknown_run *u = arg;

    u->rc = apply_command(u->w, u->cmd);
}

/* The log line apply_command writes for cmd (the worker's mode as given). */
static json_t *applied(struct worker *w, const char *text, int *rc)
{
    json_t *cmds = json_array(), *line;
    struct unknown_run u = {w, NULL, -2};
    char *out;

    json_array_append_new(cmds, json_loads(text, 0, NULL));
    commands_arrived(cmds);
    u.cmd = json_array_get(cmds, 0);
    out = stderr_capture(run_unknown, &u);
    line = out ? json_loads(out, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    *rc = u.rc;
    free(out);
    json_decref(cmds);
    return line;
}

static int msg_is(json_t *line, const char *want)
{
    const char *got = json_string_value(json_object_get(line, "msg"));

    return got && strcmp(got, want) == 0;
}

/* An unknown command is acknowledged without effect, and said so; in agent
 * mode, anything but a create or a kill is refused, a snapshot answered. */
static void test_unknown_command(void)
{
    struct worker_conf c;
    struct worker w;
    json_t *line;
    int rc;

    wconf_defaults(&c);
    memset(&w, 0, sizeof(w));
    w.conf = &c;
    w.snap_reports = json_array();
    line = applied(&w, "{\"id\":\"1-0\",\"type\":\"network\"}", &rc);
    CHECK(rc == 0 && msg_is(line, "command type network not supported; acknowledged without "
                                  "effect"));
    json_decref(line);
    line = applied(&w, "{\"id\":\"1-0\"}", &rc);
    CHECK(rc == 0 && msg_is(line, "command type (none) not supported; acknowledged without "
                                  "effect"));
    json_decref(line);
    c.agent.on = 1;
    line = applied(&w, "{\"id\":\"1-0\",\"type\":\"network\"}", &rc);
    CHECK(rc == 0 && msg_is(line, "agent mode: network refused (a session on a person's machine "
                                  "cannot be paused or hold volumes)"));
    json_decref(line);
    line = applied(&w,
                   "{\"type\":\"snapshot\",\"sandbox_id\":\"a\",\"args\":{\"snapshot_id\":"
                   "\"s1\",\"workspace\":\"ws\"}}",
                   &rc);
    CHECK(rc == 0 && msg_is(line, "agent mode: snapshot refused (a session on a person's machine "
                                  "cannot be snapshotted)"));
    CHECK(json_array_size(w.snap_reports) == 1 &&
          strcmp(json_string_value(json_object_get(json_array_get(w.snap_reports, 0), "state")),
                 "failed") == 0);
    json_decref(line);
    json_decref(w.snap_reports);
    wconf_free(&c);
}

static void test_states(void)
{
    const char *sb_wire[] = {"", "running", "paused", "exited", "failed"};
    const char *dk_wire[] = {NULL,         "created",  "running", "paused",
                             "restarting", "removing", "exited",  "dead"};

    CHECK(sizeof(sb_wire) / sizeof(sb_wire[0]) == SB_STATES);
    for (enum sb_state s = SB_NONE; s < SB_STATES; s++) {
        CHECK(strcmp(sb_state_name(s), sb_wire[s]) == 0);
        CHECK(sb_state_decode(sb_wire[s]) == s);
    }
    CHECK(sb_state_decode(NULL) == SB_NONE && sb_state_decode("Running") == SB_NONE &&
          sb_state_decode("created") == SB_NONE && strcmp(sb_state_name(SB_STATES), "") == 0);
    CHECK(sizeof(dk_wire) / sizeof(dk_wire[0]) == DK_STATES);
    for (enum dk_state s = DK_UNKNOWN + 1; s < DK_STATES; s++) {
        CHECK(strcmp(dk_state_name(s), dk_wire[s]) == 0);
        CHECK(dk_state_decode(dk_wire[s]) == s);
    }
    CHECK(dk_state_decode(NULL) == DK_UNKNOWN && dk_state_decode("up") == DK_UNKNOWN &&
          dk_state_name(DK_UNKNOWN) == NULL);
}

/* What the control plane reads (handlers/h_heartbeat.c), byte for byte. */
static void test_report_wire(void)
{
    struct sb_entry e = {.st = {.sbid = "aa", .state = SB_PAUSED}};
    json_t *o = heartbeat_report_of(&e);
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    CHECK(text && strcmp(text, "{\"id\":\"aa\",\"state\":\"paused\"}") == 0);
    free(text);
    json_decref(o);
    e.st.state = SB_EXITED;
    snprintf(e.st.reason, sizeof(e.st.reason), "exit code 0");
    o = heartbeat_report_of(&e);
    text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    CHECK(text &&
          strcmp(text, "{\"id\":\"aa\",\"reason\":\"exit code 0\",\"state\":\"exited\"}") == 0);
    free(text);
    json_decref(o);
}

void unit_commands(int *total_passed, int *total_failed)
{
    test_command_names();
    test_commands_arrived();
    test_unknown_command();
    test_states();
    test_report_wire();
    *total_passed += passed;
    *total_failed += failed;
}
