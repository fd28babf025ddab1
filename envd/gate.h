/*
 * The permission gate (agent mode, decision 0053): with -permission-mode,
 * every file operation and command start envd serves is decided first, by
 * gate_decide's six branches; a denial changes nothing. Without it, every
 * call here allows at once, as before.
 */
#ifndef ENVD_GATE_H
#define ENVD_GATE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "gate_bwrap.h"
#include "gate_decide.h"

struct gate_config {
    int on;     /* -permission-mode given */
    int strict; /* strict: ask = deny */
    char work_tree[PATH_MAX];
    char gate_dir[PATH_MAX];
    char policy[PATH_MAX];
    char tty[PATH_MAX];
    int ask_timeout_s;
    int bwrap; /* -os-sandbox bwrap */
    char sandbox_id[128];
    struct gate_list hardlock; /* -hardlock, as given */
};

extern struct gate_config gate_cfg;

/* One of the gate's flags. 1: not a gate flag; 0 applied; -1 bad value (said on stderr). */
int gate_flag(const char *name, const char *value);

/* Builds the gate's state from the flags, once, before serving. -1 (said on stderr) when it
 * cannot: a gate that cannot start must not leave envd serving ungated. */
int gate_start(void);

/* 0: allowed. -1: denied, msg says what and why (for a permission_denied / 403).
 * path: absolute, as the operation will use it. subtree: the operation reaches below it. */
int gate_file(enum gate_op op, const char *path, int subtree, char *msg, size_t msgsz);

/* gate_file that also gives the canonical path it decided on (path itself when the gate
 * is off), for gate_open. */
int gate_file_decided(enum gate_op op, const char *path, int subtree, char *decided,
                      size_t decidedsz, char *msg, size_t msgsz);

/* Opens a path gate_file_decided allowed without following any symlink in it, so a link
 * planted after the decision cannot redirect the open (EACCES then). A plain open when
 * the gate is off. O_CLOEXEC is added. */
int gate_open(const char *decided, int flags, mode_t mode);

/* The same for a command start: argv, its executable (as found on PATH), cwd, and the
 * HOME it will run with (for ~ in its words). */
int gate_exec(char *const *argv, const char *exe, const char *cwd, const char *home, char *msg,
              size_t msgsz);

/* With -os-sandbox bwrap, out becomes the argv to execve instead of argv (bwrap around
 * exe); without, out stays empty (n == 0). Free out with gate_argvec_free either way.
 * -1 when out of memory. */
int gate_wrap_command(char *const *argv, const char *exe, const char *cwd, struct gate_argvec *out);

#endif
