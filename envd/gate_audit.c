/*
 * One write(2) per line on an O_APPEND descriptor: lines of several threads,
 * and of several envds sharing the gate dir, never interleave, and nothing
 * already written is ever rewritten.
 */
#include "gate_audit.h"
#include "connect_rpc.h"
#include "envd.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gate_audit_write(int fd, const struct gate_audit_line *l)
{
    char ts[64], *text;
    json_t *o;
    int rc;

    envd_utc_now(ts, sizeof(ts));
    o = json_pack("{s:s, s:s, s:s}", "time", ts, "sandbox", l->sandbox, "op", gate_op_name(l->op));
    if (o == NULL)
        return -1;
    /* File names need not be UTF-8, which JSON strings must be. */
    json_object_set_new(o, l->op == GATE_EXEC ? "command" : "path", json_str_lossy(l->subject));
    json_object_set_new(o, "branch", json_string(gate_branch_name(l->branch)));
    json_object_set_new(o, "answer", json_string(l->answer == GA_ALLOW ? "allow" : "deny"));
    json_object_set_new(o, "by", json_string(l->by));
    text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (text == NULL)
        return -1;
    size_t len = strlen(text);
    text[len] = '\n'; /* replaces the terminating NUL: written by length */
    rc = write(fd, text, len + 1) == (ssize_t)(len + 1) ? 0 : -1;
    free(text);
    return rc;
}
