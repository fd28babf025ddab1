/*
 * The gate's flags (the contract of issue 13) and its start: the hardlocks
 * built from the invoking user's home, the policy file, the grants file.
 */
#include "gate.h"
#include "envd.h"
#include "gate_canon.h"
#include "users.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct gate_config gate_cfg = {.tty = "/dev/tty", .ask_timeout_s = 30};

static int copy_value(char *dst, size_t dstsz, const char *name, const char *value)
{
    if (strlen(value) >= dstsz || value[0] == '\0') {
        fprintf(stderr, "envd: -%s: empty or too long\n", name);
        return -1;
    }
    memcpy(dst, value, strlen(value) + 1);
    return 0;
}

static int mode_flag(const char *value)
{
    if (strcmp(value, "prompt") != 0 && strcmp(value, "strict") != 0) {
        fprintf(stderr, "envd: -permission-mode: expected prompt or strict, not '%s'\n", value);
        return -1;
    }
    gate_cfg.on = 1;
    gate_cfg.strict = strcmp(value, "strict") == 0;
    return 0;
}

static int timeout_flag(const char *value)
{
    char *end;
    long s = strtol(value, &end, 10);

    if (*end != '\0' || s <= 0 || s > 3600) {
        fprintf(stderr, "envd: -ask-timeout: expected seconds (1..3600), not '%s'\n", value);
        return -1;
    }
    gate_cfg.ask_timeout_s = (int)s;
    return 0;
}

static int sandbox_flag(const char *value)
{
    if (strcmp(value, "bwrap") != 0) {
        fprintf(stderr, "envd: -os-sandbox: only bwrap is known, not '%s'\n", value);
        return -1;
    }
    gate_cfg.bwrap = 1;
    return 0;
}

int gate_flag(const char *name, const char *value)
{
    if (strcmp(name, "permission-mode") == 0)
        return mode_flag(value);
    if (strcmp(name, "work-tree") == 0)
        return copy_value(gate_cfg.work_tree, sizeof(gate_cfg.work_tree), name, value);
    if (strcmp(name, "gate-dir") == 0)
        return copy_value(gate_cfg.gate_dir, sizeof(gate_cfg.gate_dir), name, value);
    if (strcmp(name, "policy") == 0)
        return copy_value(gate_cfg.policy, sizeof(gate_cfg.policy), name, value);
    if (strcmp(name, "gate-tty") == 0)
        return copy_value(gate_cfg.tty, sizeof(gate_cfg.tty), name, value);
    if (strcmp(name, "sandbox-id") == 0)
        return copy_value(gate_cfg.sandbox_id, sizeof(gate_cfg.sandbox_id), name, value);
    if (strcmp(name, "ask-timeout") == 0)
        return timeout_flag(value);
    if (strcmp(name, "os-sandbox") == 0)
        return sandbox_flag(value);
    if (strcmp(name, "hardlock") == 0) {
        if (value[0] != '/') {
            fprintf(stderr, "envd: -hardlock: '%s' is not an absolute path\n", value);
            return -1;
        }
        return gate_list_add(&gate_cfg.hardlock, value);
    }
    return 1;
}
