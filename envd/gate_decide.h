/*
 * The permission gate's decision engine: a pure function of the gate's state
 * and one request (an operation on a canonical path, or a command start), six
 * branches, first match wins. No I/O here: canonicalising, asking, persisting
 * and auditing are the callers' (gate.c) jobs, so the table test can drive it.
 */
#ifndef ENVD_GATE_DECIDE_H
#define ENVD_GATE_DECIDE_H

#include <stddef.h>

enum gate_op {
    GATE_READ,
    GATE_WRITE,
    GATE_LIST,
    GATE_STAT,
    GATE_REMOVE,
    GATE_MOVE,
    GATE_WATCH,
    GATE_EXEC
};

enum gate_branch { GB_HARDLOCK, GB_POLICY, GB_WORKTREE, GB_PERMANENT, GB_SESSION, GB_ASK };

/* GA_ASK: the person must answer (prompt mode); strict mode never returns it. */
enum gate_answer { GA_ALLOW, GA_DENY, GA_ASK };

/* A growable list of strings (paths or command patterns). */
struct gate_list {
    char **v;
    size_t n, cap;
};

int gate_list_add(struct gate_list *l, const char *s);
int gate_list_has(const struct gate_list *l, const char *s);
void gate_list_free(struct gate_list *l);

struct gate_state {
    int strict;            /* ask = deny without asking */
    const char *work_tree; /* canonical; NULL: none */
    struct gate_list hardlocks, deny_paths, deny_cmds;
    struct gate_list perm_paths, perm_cmds; /* from <gate-dir>/grants */
    struct gate_list sess_paths, sess_cmds; /* this envd's memory only */
};

struct gate_request {
    enum gate_op op;
    const char *path; /* file operations: canonical */
    int subtree;      /* the operation reaches below path (remove, move, deep list/watch) */
    /* command starts: the argv joined, the canonical executable and cwd, and
     * every argument that names an existing path, canonicalised */
    const char *command;
    const char *exe;
    const char *cwd;
    const char *const *args;
    size_t nargs;
};

struct gate_verdict {
    enum gate_branch branch;
    enum gate_answer answer;
};

struct gate_verdict gate_decide(const struct gate_state *s, const struct gate_request *q);

/* path equals prefix or lies below it (both canonical). */
int gate_path_under(const char *path, const char *prefix);

const char *gate_op_name(enum gate_op op);
const char *gate_branch_name(enum gate_branch b);

#endif
