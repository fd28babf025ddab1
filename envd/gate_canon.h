/*
 * Canonical paths for the permission gate: what the kernel would reach, so a
 * symlink, "..", "." or a bind mount cannot carry a request past a decision.
 */
#ifndef ENVD_GATE_CANON_H
#define ENVD_GATE_CANON_H

#include <stddef.h>

#include "gate_decide.h"

/*
 * abs (absolute) made canonical: realpath of its longest existing prefix,
 * the rest appended lexically, so a path that does not exist yet is decided
 * by its canonical parent. -1 (ENAMETOOLONG, EINVAL) when it cannot be.
 */
int gate_canon(const char *abs, char *out, size_t outsz);

/* arg as a command would see it from cwd (absolute, or relative to cwd). */
int gate_canon_at(const char *cwd, const char *arg, char *out, size_t outsz);

/*
 * A hard link is another name of the same file: when path is a regular file
 * with more than one link and a file at or below one of roots is the same
 * inode, that file's path goes to out and 1 is returned; else 0.
 */
int gate_hardlink_alias(const char *path, const struct gate_list *roots, char *out, size_t outsz);

#endif
