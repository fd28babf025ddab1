/* -os-sandbox bwrap: a command's argv wrapped in bubblewrap, so the kernel
 * enforces what the gate decides even for what the gate cannot see. */
#ifndef ENVD_GATE_BWRAP_H
#define ENVD_GATE_BWRAP_H

#include <stddef.h>

struct gate_argvec {
    char **v; /* NULL-terminated */
    size_t n, cap;
};

/*
 * bwrap_path [mounts] --chdir cwd -- exe argv[1..]: the root read-only, a
 * private /dev, /proc and /tmp, the work tree writable, every path of hidden
 * that exists covered (a directory by an empty read-only tmpfs, anything else
 * by /dev/null). -1 when out of memory.
 */
int gate_bwrap_argv(const char *bwrap_path, const char *work_tree, char *const *hidden,
                    size_t nhidden, char *const *argv, const char *exe, const char *cwd,
                    struct gate_argvec *out);
void gate_argvec_free(struct gate_argvec *a);

#endif
