/*
 * The gate's rule files, one rule a line, "<verb> <value>" ('#' starts a
 * comment line): the policy file (deny <path-prefix>, deny-command <glob>)
 * and <gate-dir>/grants (allow <path-prefix>, allow-command <glob>). Paths
 * are canonicalised as they are read.
 */
#ifndef ENVD_GATE_RULES_H
#define ENVD_GATE_RULES_H

#include <stddef.h>

#include "gate_decide.h"

struct gate_rule_verbs {
    const char *path_verb; /* "deny" or "allow" */
    const char *cmd_verb;  /* "deny-command" or "allow-command" */
};

/* Adds the file's rules to paths and cmds. A missing file is no rules when
 * missing_ok. -1 with msg filled for an unreadable file or a bad line. */
int gate_rules_load(const char *file, const struct gate_rule_verbs *verbs, int missing_ok,
                    struct gate_list *paths, struct gate_list *cmds, char *msg, size_t msgsz);

/* Appends one rule line with a single write(2) (O_APPEND): other envds sharing
 * the gate dir read whole lines. -1 when value holds a newline or the write
 * fails. */
int gate_rules_append(const char *file, const char *verb, const char *value);

/* command as an fnmatch pattern matching exactly itself. malloc'ed. */
char *gate_rules_literal_pattern(const char *command);

#endif
