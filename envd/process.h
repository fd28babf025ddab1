/*
 * Processes started by envd: spawning as a user (pipes or a PTY), a pump
 * thread per process that turns output into ProcessEvent frames, and the
 * subscribers (Start/Connect streams) those frames are delivered to.
 */
#ifndef ENVD_PROCESS_H
#define ENVD_PROCESS_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "users.h"

/* An encoded stream frame shared by every subscriber (reference counted). */
struct proc_frame {
    int refs;
    int is_end;
    size_t len;
    char data[];
};

struct proc_item {
    struct proc_item *next;
    struct proc_frame *frame;
};

struct proc_sub {
    struct proc_sub *next;
    struct proc_item *head, *tail;
    size_t queued; /* bytes waiting; the pump pauses when a subscriber falls behind */
    int efd;       /* eventfd: readable when head != NULL */
};

struct proc;

struct proc_spec {
    const struct envd_user *user;
    json_t *config; /* ProcessConfig as requested; reported by List */
    char **argv;
    char **envp;
    char cwd[PATH_MAX];
    int pty;
    unsigned short cols, rows;
    int stdin_enabled;
    const char *tag;
    long long deadline_ms; /* monotonic time to SIGKILL at; 0 = never */
};

/* Finds cmd on the PATH of envp, as a shell would; cmd itself when it holds a '/' or is
 * nowhere on the PATH. */
void proc_find_executable(const char *cmd, char *const *envp, char *out, size_t outsz);

/* Starts the process with first as its first subscriber (so no output is missed).
 * NULL on failure with msg filled. */
struct proc *proc_spawn(const struct proc_spec *spec, struct proc_sub *first, char *msg,
                        size_t msgsz);

/* A running process by pid (when pid != 0) or tag; a reference the caller must drop. */
struct proc *proc_find(unsigned long pid, const char *tag);
void proc_unref(struct proc *p);
pid_t proc_pid(const struct proc *p);
/* The config the process was started with ({cmd, args, envs, cwd}). */
const json_t *proc_config(const struct proc *p);

struct proc_sub *proc_sub_new(void);
/* Frees a subscriber that was never attached. */
void proc_sub_free(struct proc_sub *s);
/* -1 when the process already ended. */
int proc_subscribe(struct proc *p, struct proc_sub *s);
/* Detaches and frees s. */
void proc_unsubscribe(struct proc *p, struct proc_sub *s);
/* Next frame for s, or NULL when none is queued. */
struct proc_frame *proc_sub_pop(struct proc *p, struct proc_sub *s);
void proc_frame_unref(struct proc_frame *f);

/* Input and control. Each returns 0, or -1 with msg filled and *code a Connect code. */
int proc_write_input(struct proc *p, int to_pty, const void *data, size_t len, const char **code,
                     char *msg, size_t msgsz);
int proc_close_stdin(struct proc *p, const char **code, char *msg, size_t msgsz);
int proc_resize(struct proc *p, unsigned short cols, unsigned short rows, const char **code,
                char *msg, size_t msgsz);
int proc_signal(struct proc *p, int sig);

/* ListResponse.processes for every running process. */
json_t *proc_list(void);

/* Called by the reaper for every child it reaps. */
void proc_on_exit(pid_t pid, int status);
/* SIGKILLs every process group envd started (envd is shutting down). */
void proc_kill_all(void);

#endif
