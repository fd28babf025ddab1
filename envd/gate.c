/*
 * The gate at run time: canonicalise, decide (gate_decide), ask when the
 * answer is the person's, remember the answer (session or permanent grant),
 * audit, answer. The state lock is never held while a question is open, so
 * the sandbox's other requests go on meanwhile (each connection has its own
 * thread). A decision that cannot be audited is a denial.
 */
#include "gate.h"
#include "envd.h"
#include "gate_argv.h"
#include "gate_ask.h"
#include "gate_audit.h"
#include "gate_canon.h"
#include "gate_rules.h"
#include "gate_start.h"
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t state_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t audit_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gate_state state;
static struct gate_files files;
static int audit_fd = -1;
static struct stat grants_seen; /* the grants file as last loaded */
static char bwrap_path[PATH_MAX];

extern char **environ;

/* bwrap must be there at start: a sandbox promised CONTAINER must not run commands bare. */
static int find_bwrap(void)
{
    proc_find_executable("bwrap", environ, bwrap_path, sizeof(bwrap_path));
    if (strchr(bwrap_path, '/') != NULL && access(bwrap_path, X_OK) == 0)
        return 0;
    fprintf(stderr, "envd: -os-sandbox bwrap: bwrap not found on PATH (Debian: bubblewrap)\n");
    return -1;
}

int gate_start(void)
{
    if (!gate_cfg.on) {
        if (gate_cfg.bwrap)
            fprintf(stderr, "envd: -os-sandbox needs -permission-mode\n");
        return gate_cfg.bwrap ? -1 : 0;
    }
    if (gate_state_build(&state, &files) < 0 || (gate_cfg.bwrap && find_bwrap() < 0))
        return -1;
    audit_fd = open(files.audit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (audit_fd < 0) {
        fprintf(stderr, "envd: gate: %s: %s\n", files.audit, strerror(errno));
        return -1;
    }
    envd_log("permission gate on: %s mode, work tree %s, gate dir %s, commands %s",
             gate_cfg.strict ? "strict" : "prompt", state.work_tree ? state.work_tree : "(none)",
             gate_cfg.gate_dir, gate_cfg.bwrap ? "under bwrap" : "bare");
    return 0;
}

/* Permanent grants come from the file, which other envds may append to: re-read
 * when it changed. Caller holds state_mu. */
static void refresh_grants(void)
{
    static const struct gate_rule_verbs allow = {"allow", "allow-command"};
    struct gate_list paths = {0}, cmds = {0};
    struct stat st;
    char msg[PATH_MAX + 128];

    if (stat(files.grants, &st) < 0)
        memset(&st, 0, sizeof(st));
    if (st.st_ino == grants_seen.st_ino && st.st_size == grants_seen.st_size &&
        st.st_mtim.tv_sec == grants_seen.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == grants_seen.st_mtim.tv_nsec)
        return;
    if (gate_rules_load(files.grants, &allow, 1, &paths, &cmds, msg, sizeof(msg)) < 0) {
        envd_log("gate: grants not reloaded: %s", msg);
        gate_list_free(&paths);
        gate_list_free(&cmds);
        return;
    }
    gate_list_free(&state.perm_paths);
    gate_list_free(&state.perm_cmds);
    state.perm_paths = paths;
    state.perm_cmds = cmds;
    grants_seen = st;
}

static struct gate_verdict decide(const struct gate_request *q)
{
    struct gate_verdict v;

    pthread_mutex_lock(&state_mu);
    refresh_grants();
    v = gate_decide(&state, q);
    pthread_mutex_unlock(&state_mu);
    return v;
}

static int conclude(const struct gate_request *q, const char *subject, struct gate_verdict v,
                    const char *by, char *msg, size_t msgsz)
{
    struct gate_audit_line line = {gate_cfg.sandbox_id, q->op, subject, v.branch, v.answer, by};
    int rc;

    pthread_mutex_lock(&audit_mu);
    rc = gate_audit_write(audit_fd, &line);
    pthread_mutex_unlock(&audit_mu);
    if (rc < 0) {
        envd_log("gate: cannot write the audit log: %s", strerror(errno));
        snprintf(msg, msgsz,
                 "permission gate: the decision could not be audited, so it is a "
                 "denial: %s %.900s",
                 gate_op_name(q->op), subject);
        return -1;
    }
    if (v.answer == GA_ALLOW)
        return 0;
    snprintf(msg, msgsz, "permission denied by the gate (%s, %s): %s %.900s",
             gate_branch_name(v.branch), by, gate_op_name(q->op), subject);
    return -1;
}

/* Remembers an answer: value is a canonical path, or a command pattern. */
static void grant(const struct gate_request *q, const char *value, int permanent)
{
    int exec = q->op == GATE_EXEC;

    pthread_mutex_lock(&state_mu);
    if (!permanent)
        gate_list_add(exec ? &state.sess_cmds : &state.sess_paths, value);
    else if (gate_rules_append(files.grants, exec ? "allow-command" : "allow", value) < 0)
        envd_log("gate: cannot persist a grant in %s: %s", files.grants, strerror(errno));
    pthread_mutex_unlock(&state_mu);
}

/* The question as the person sees it; control characters of a hostile file name
 * cannot rewrite the terminal. */
static void make_question(const struct gate_request *q, const char *subject, char *out,
                          size_t outsz)
{
    snprintf(out, outsz, "corral: sandbox %s wants to %s %s", gate_cfg.sandbox_id,
             q->op == GATE_EXEC ? "run" : gate_op_name(q->op), subject);
    for (char *p = out; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

static int ask_person(const struct gate_request *q, const char *subject, const char *grant_value,
                      char *msg, size_t msgsz)
{
    struct gate_verdict v = {GB_ASK, GA_ALLOW};
    char question[PATH_MAX + 256];

    make_question(q, subject, question, sizeof(question));
    switch (gate_ask(gate_cfg.tty, files.ask_lock, gate_cfg.ask_timeout_s, question)) {
    case GR_ONCE:
        break;
    case GR_SESSION:
        grant(q, grant_value, 0);
        break;
    case GR_ALWAYS:
        grant(q, grant_value, 1);
        break;
    case GR_DENY:
        v.answer = GA_DENY;
        break;
    case GR_TIMEOUT:
        v.answer = GA_DENY;
        return conclude(q, subject, v, "timeout", msg, msgsz);
    }
    return conclude(q, subject, v, "person", msg, msgsz);
}

static int settle(const struct gate_request *q, const char *subject, const char *grant_value,
                  char *msg, size_t msgsz)
{
    struct gate_verdict v = decide(q);

    if (v.answer != GA_ASK)
        return conclude(q, subject, v, "gate", msg, msgsz);
    return ask_person(q, subject, grant_value, msg, msgsz);
}

/* A hard link to a hardlocked or denied file is decided as that file. The roots
 * never change after start, so no lock is needed. */
static void resolve_alias(char *path, size_t sz)
{
    char alias[PATH_MAX];

    if (gate_hardlink_alias(path, &state.hardlocks, alias, sizeof(alias)) ||
        gate_hardlink_alias(path, &state.deny_paths, alias, sizeof(alias)))
        snprintf(path, sz, "%s", alias);
}

int gate_file_decided(enum gate_op op, const char *path, int subtree, char *decided,
                      size_t decidedsz, char *msg, size_t msgsz)
{
    char canon[PATH_MAX];
    struct gate_request q = {.op = op, .path = canon, .subtree = subtree};

    if (!gate_cfg.on) {
        if (snprintf(decided, decidedsz, "%s", path) < (int)decidedsz)
            return 0;
        snprintf(msg, msgsz, "path too long");
        return -1;
    }
    if (gate_canon(path, canon, sizeof(canon)) < 0 || strlen(canon) >= decidedsz) {
        snprintf(msg, msgsz, "permission gate: cannot canonicalise %.900s: %s", path,
                 strerror(errno));
        return -1;
    }
    resolve_alias(canon, sizeof(canon));
    memcpy(decided, canon, strlen(canon) + 1);
    return settle(&q, canon, canon, msg, msgsz);
}

int gate_file(enum gate_op op, const char *path, int subtree, char *msg, size_t msgsz)
{
    char decided[PATH_MAX];

    return gate_file_decided(op, path, subtree, decided, sizeof(decided), msg, msgsz);
}

int gate_open(const char *decided, int flags, mode_t mode)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
                           .mode = (flags & O_CREAT) ? mode : 0,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd;

    if (!gate_cfg.on)
        return open(decided, flags | O_CLOEXEC, mode);
    fd = (int)syscall(SYS_openat2, AT_FDCWD, decided, &how, sizeof(how));
    if (fd < 0 && errno == ENOSYS) /* before Linux 5.6: the last component at least */
        fd = open(decided, flags | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0 && errno == ELOOP)
        errno = EACCES; /* a symlink appeared where the gate saw none */
    return fd;
}

static int canon_exec_paths(struct gate_argv *a, const char *exe, const char *cwd, char *exe_out,
                            char *cwd_out)
{
    if (gate_canon(cwd, cwd_out, PATH_MAX) < 0 ||
        (strchr(exe, '/') != NULL ? gate_canon_at(cwd_out, exe, exe_out, PATH_MAX) < 0
                                  : snprintf(exe_out, PATH_MAX, "%s", exe) < 0))
        return -1;
    resolve_alias(exe_out, PATH_MAX);
    for (size_t i = 0; i < a->n; i++) {
        char alias[PATH_MAX];
        snprintf(alias, sizeof(alias), "%s", a->paths[i]);
        resolve_alias(alias, sizeof(alias));
        if (strcmp(alias, a->paths[i]) != 0) {
            char *copy = strdup(alias);
            if (copy == NULL)
                return -1;
            free(a->paths[i]);
            a->paths[i] = copy;
        }
    }
    return 0;
}

int gate_exec(char *const *argv, const char *exe, const char *cwd, const char *home, char *msg,
              size_t msgsz)
{
    char exe_canon[PATH_MAX], cwd_canon[PATH_MAX];
    struct gate_argv a;
    char *pattern = NULL;
    int rc = -1;

    if (!gate_cfg.on)
        return 0;
    if (gate_argv_collect(argv, cwd, home, &a) < 0 ||
        canon_exec_paths(&a, exe, cwd, exe_canon, cwd_canon) < 0 ||
        (pattern = gate_rules_literal_pattern(a.command)) == NULL) {
        snprintf(msg, msgsz, "permission gate: cannot examine the command (too many paths?)");
    } else {
        struct gate_request q = {.op = GATE_EXEC,
                                 .command = a.command,
                                 .exe = exe_canon,
                                 .cwd = cwd_canon,
                                 .args = (const char *const *)a.paths,
                                 .nargs = a.n};
        rc = settle(&q, a.command, pattern, msg, msgsz);
    }
    free(pattern);
    gate_argv_free(&a);
    return rc;
}

/* The hardlocks and the policy's denials never change after start: no lock. */
int gate_wrap_command(char *const *argv, const char *exe, const char *cwd, struct gate_argvec *out)
{
    struct gate_list hidden = {0};
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!gate_cfg.on || !gate_cfg.bwrap)
        return 0;
    for (size_t i = 0; i < state.hardlocks.n && rc == 0; i++)
        rc = gate_list_add(&hidden, state.hardlocks.v[i]);
    for (size_t i = 0; i < state.deny_paths.n && rc == 0; i++)
        rc = gate_list_add(&hidden, state.deny_paths.v[i]);
    if (rc == 0)
        rc = gate_bwrap_argv(bwrap_path, state.work_tree, hidden.v, hidden.n, argv, exe, cwd, out);
    gate_list_free(&hidden);
    return rc;
}
