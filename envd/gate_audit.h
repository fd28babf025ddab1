/* The gate's audit log: <gate-dir>/audit.jsonl, one decision a line, append-only. */
#ifndef ENVD_GATE_AUDIT_H
#define ENVD_GATE_AUDIT_H

#include "gate_decide.h"

struct gate_audit_line {
    const char *sandbox;
    enum gate_op op;
    const char *subject; /* canonical path, or the command for GATE_EXEC */
    enum gate_branch branch;
    enum gate_answer answer; /* GA_ALLOW or GA_DENY */
    const char *by;          /* "gate", "person" or "timeout" */
};

/* -1 when the line could not be written (the caller then denies). */
int gate_audit_write(int fd, const struct gate_audit_line *l);

#endif
