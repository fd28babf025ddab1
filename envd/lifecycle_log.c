#include "lifecycle_log.h"

#include "envd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void lifecycle_cmd_name(const char *cmd, char *out, size_t outlen)
{
    const char *slash = cmd ? strrchr(cmd, '/') : NULL;

    snprintf(out, outlen, "%s", slash ? slash + 1 : cmd ? cmd : "");
}

/* One write(2) per line: lines of several threads never interleave. */
static void emit(json_t *o)
{
    char ts[64], *text;

    envd_utc_now(ts, sizeof(ts));
    json_object_set_new(o, "time", json_string(ts));
    json_object_set_new(o, "logger", json_string("envd"));
    text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text)
        return;
    size_t len = strlen(text);
    text[len] = '\n';
    if (write(STDOUT_FILENO, text, len + 1) < 0) {
        /* Nobody reads the log: nothing to tell. */
    }
    free(text);
}

static json_t *process_line(const char *level, const char *message, pid_t pid, const json_t *config)
{
    char pidtext[16], cmd[64];

    snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
    lifecycle_cmd_name(json_string_value(json_object_get(config, "cmd")), cmd, sizeof(cmd));
    return json_pack("{s:s, s:s, s:s, s:s}", "level", level, "message", message, "pid", pidtext,
                     "cmd", cmd);
}

void lifecycle_envd_started(const char *addr, int port)
{
    char listen[96];

    snprintf(listen, sizeof(listen), "%s:%d", addr, port);
    emit(json_pack("{s:s, s:s, s:s, s:s}", "level", "info", "message", "envd started", "version",
                   ENVD_VERSION, "listen", listen));
}

void lifecycle_process_started(pid_t pid, const json_t *config, const char *user)
{
    json_t *o = process_line("info", "process started", pid, config);

    json_object_set_new(o, "user", json_string(user ? user : ""));
    emit(o);
}

void lifecycle_process_ended(pid_t pid, const json_t *config, int ok, const char *status)
{
    json_t *o = process_line(ok ? "info" : "warn", "process ended", pid, config);

    json_object_set_new(o, "status", json_string(status));
    emit(o);
}
