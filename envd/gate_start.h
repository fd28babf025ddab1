/* Building the gate's fixed state from its flags (gate_cfg). */
#ifndef ENVD_GATE_START_H
#define ENVD_GATE_START_H

#include <limits.h>

#include "gate.h"

/* The gate's own files, in the gate dir. */
struct gate_files {
    char grants[PATH_MAX];
    char ask_lock[PATH_MAX];
    char audit[PATH_MAX];
};

/* Hardlocks, policy denials, work tree; the gate dir made. -1 (said on stderr). */
int gate_state_build(struct gate_state *s, struct gate_files *f);

#endif
