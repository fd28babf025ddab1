/* docker_exec.h: commands run in a running container through the Engine
 * API's exec (never the `docker` CLI): the start and ready commands of a
 * template's sandbox, a build's steps.
 *
 * Output comes as dockerd's frames (no TTY); it is cut into lines as it
 * arrives, and its last bytes are kept for an error message. */
#ifndef WORKERD_DOCKER_EXEC_H
#define WORKERD_DOCKER_EXEC_H

#include "docker_api.h"

/* Bytes of output an error message may quote (docs/templates.md). */
#define EXEC_TAIL_MAX 300

struct exec_spec {
    const char *user;    /* "" or NULL: the image's USER */
    const char *workdir; /* "" or NULL: the image's WORKDIR */
    json_t *env;         /* ["K=V", …] or NULL */
    json_t *cmd;         /* the argv, e.g. ["/bin/sh", "-c", "…"] */
};

/* Called with each line of output (without its '\n'; a line longer than a
 * few KB comes in pieces). */
typedef void (*exec_line_fn)(void *ud, const char *line);

/* The last EXEC_TAIL_MAX bytes of out, from a line's start when one starts
 * within them, trailing newlines dropped, into tail (pure). */
void exec_tail(const char *out, size_t len, char *tail, size_t taillen);

/* Starts s in container ctr detached; its id in id (65 bytes). 0, 1 refused
 * (err), -1 dockerd down. */
int docker_exec_detached(struct docker *d, const char *ctr, const struct exec_spec *s, char *id,
                         char *err, size_t errlen);

/* Whether exec id still runs, and its exit code once it ended. 0, or -1. */
int docker_exec_status(struct docker *d, const char *id, int *running, int *code, char *err,
                       size_t errlen);

/* Runs s in ctr and waits for its end, at most timeout_ms: each output line
 * to line (may be NULL), the output's last lines in tail (EXEC_TAIL_MAX + 1
 * bytes), its exit code in *code. 0 ended, 2 still running at timeout_ms, 1
 * refused (err), -1 dockerd down. */
int docker_exec_run(struct docker *d, const char *ctr, const struct exec_spec *s, long timeout_ms,
                    exec_line_fn line, void *ud, int *code, char *tail, char *err, size_t errlen);

#endif
