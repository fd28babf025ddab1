/*
 * Every field is checked for its JSON type before use: the request body is
 * the client's, and jansson returns NULL or 0 for a field of the wrong type,
 * which would otherwise pass for an absent one.
 */
#include "process_parse.h"
#include "base64.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

const char **process_parse_argv(json_t *config, struct rpc_error *err)
{
    const char *cmd = json_get_str(config, "cmd");
    json_t *args = json_object_get(config, "args");
    size_t n = json_array_size(args), i;
    const char **argv;
    json_t *a;

    if (cmd == NULL || cmd[0] == '\0') {
        rpc_fail(err, "invalid_argument", "process.cmd is required");
        return NULL;
    }
    argv = calloc(n + 2, sizeof(*argv));
    if (argv == NULL) {
        rpc_fail(err, "internal", "out of memory");
        return NULL;
    }
    argv[0] = cmd;
    json_array_foreach(args, i, a)
    {
        if (!json_is_string(a)) {
            rpc_fail(err, "invalid_argument", "process.args[%zu] is not a string", i);
            free(argv);
            return NULL;
        }
        argv[i + 1] = json_string_value(a);
    }
    return argv;
}

int process_parse_pty(json_t *pty, struct proc_spec *spec, struct rpc_error *err)
{
    json_t *size = json_object_get(pty, "size");
    unsigned long cols, rows;

    if (pty == NULL || json_is_null(pty))
        return 0;
    if (json_get_u32(size, "cols", 80, &cols) < 0 || json_get_u32(size, "rows", 24, &rows) < 0 ||
        cols > 0xffff || rows > 0xffff) {
        rpc_fail(err, "invalid_argument", "pty.size must hold cols and rows as integers");
        return -1;
    }
    spec->pty = 1;
    spec->cols = (unsigned short)cols;
    spec->rows = (unsigned short)rows;
    return 0;
}

int process_parse_signal(json_t *v)
{
    const char *name = json_string_value(v);

    if (json_is_integer(v))
        return (int)json_integer_value(v);
    if (name == NULL)
        return 0;
    if (strcmp(name, "SIGNAL_SIGKILL") == 0)
        return SIGKILL;
    if (strcmp(name, "SIGNAL_SIGTERM") == 0)
        return SIGTERM;
    return 0;
}

int process_parse_selector(json_t *sel, unsigned long *pid, const char **tag, struct rpc_error *err)
{
    *tag = json_get_str(sel, "tag");
    if (json_get_u32(sel, "pid", 0, pid) < 0 || (*pid == 0 && *tag == NULL)) {
        rpc_fail(err, "invalid_argument", "process selector needs a pid or a tag");
        return -1;
    }
    return 0;
}

int process_parse_input(json_t *input, unsigned char **data, size_t *len, int *to_pty,
                        struct rpc_error *err)
{
    const char *pty_b64 = json_get_str(input, "pty");
    const char *b64 = pty_b64 ? pty_b64 : json_get_str(input, "stdin");

    *to_pty = pty_b64 != NULL;
    if (b64 == NULL)
        return 0;
    *data = base64_decode(b64, strlen(b64), len);
    if (*data == NULL) {
        rpc_fail(err, "invalid_argument", "input is not valid base64");
        return -1;
    }
    return 1;
}
