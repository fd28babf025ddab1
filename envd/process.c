/*
 * Process lifecycle. The reaper thread reaps every child (envd is PID 1 in the
 * sandbox) and tells the process's pump through a pipe. The pump reads stdout
 * and stderr (or the PTY), broadcasts each chunk to the subscribers and, once
 * the process has exited, drains what is still buffered and sends the end
 * event. A background grandchild that keeps the output pipe open therefore
 * does not hold the end event back. Subscribers that fall behind make the
 * pump wait (back-pressure), so memory stays bounded and no output is lost.
 *
 * Locks: reg_mu guards the registry and exit status; proc.mu the subscribers;
 * proc.io_mu the input descriptors. reg_mu is never taken while holding a proc
 * lock.
 */
#include "process.h"

#include "lifecycle_log.h"
#include "connect_rpc.h"
#include "envd.h"
#include "base64.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define CHUNK_SIZE (32 * 1024)
#define SUB_MAX_QUEUED (4 * 1024 * 1024)
#define DRAIN_MAX_MS 2000

struct proc {
    struct proc *next;
    int refs;
    pid_t pid;
    char *tag;
    json_t *config;
    int is_pty;
    int master_fd;
    int stdin_fd;
    int out_fd, err_fd;
    int notify[2];
    int exited, status;
    long long deadline_ms;
    int ended;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    pthread_mutex_t io_mu;
    struct proc_sub *subs;
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct proc *registry;

pid_t proc_pid(const struct proc *p)
{
    return p->pid;
}

const json_t *proc_config(const struct proc *p)
{
    return p->config;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void proc_free(struct proc *p)
{
    close_fd(&p->master_fd);
    close_fd(&p->stdin_fd);
    close_fd(&p->out_fd);
    close_fd(&p->err_fd);
    close_fd(&p->notify[0]);
    close_fd(&p->notify[1]);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->io_mu);
    pthread_cond_destroy(&p->cond);
    json_decref(p->config);
    free(p->tag);
    free(p);
}

void proc_unref(struct proc *p)
{
    if (p != NULL && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
        proc_free(p);
}

void proc_frame_unref(struct proc_frame *f)
{
    if (f != NULL && __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(f);
}

/* Encodes {"event": ev} (ev consumed) as a shared frame. */
static struct proc_frame *make_frame(json_t *ev, int is_end)
{
    json_t *msg = json_pack("{s:o}", "event", ev);
    size_t len;
    char *enc = msg ? rpc_encode_frame(msg, &len) : NULL;
    struct proc_frame *f = enc ? malloc(sizeof(*f) + len) : NULL;

    json_decref(msg);
    if (f != NULL) {
        f->refs = 1;
        f->is_end = is_end;
        f->len = len;
        memcpy(f->data, enc, len);
    }
    free(enc);
    return f;
}

static int sub_lagging(struct proc *p)
{
    for (struct proc_sub *s = p->subs; s != NULL; s = s->next)
        if (s->queued > SUB_MAX_QUEUED)
            return 1;
    return 0;
}

/* Queues ev for every subscriber; waits first while one of them is far behind. */
static void broadcast(struct proc *p, json_t *ev, int is_end)
{
    struct proc_frame *f = make_frame(ev, is_end);
    uint64_t one = 1;

    if (f == NULL) {
        envd_log("pid %d: cannot encode an event, dropped", p->pid);
        return;
    }
    pthread_mutex_lock(&p->mu);
    while (!is_end && sub_lagging(p))
        pthread_cond_wait(&p->cond, &p->mu);
    for (struct proc_sub *s = p->subs; s != NULL; s = s->next) {
        struct proc_item *it = malloc(sizeof(*it));
        if (it == NULL)
            continue;
        it->next = NULL;
        it->frame = f;
        __atomic_add_fetch(&f->refs, 1, __ATOMIC_ACQ_REL);
        if (s->tail != NULL)
            s->tail->next = it;
        else
            s->head = it;
        s->tail = it;
        s->queued += f->len;
        if (write(s->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
            envd_log("eventfd write: %s", strerror(errno));
    }
    if (is_end)
        p->ended = 1;
    pthread_mutex_unlock(&p->mu);
    proc_frame_unref(f);
}

static void broadcast_data(struct proc *p, const char *stream, const unsigned char *buf, size_t n)
{
    char *b64 = base64_encode(buf, n);

    if (b64 == NULL)
        return;
    broadcast(p, json_pack("{s:{s:s}}", "data", stream, b64), 0);
    free(b64);
}

/* Reads one chunk from *fd; closes it at EOF (EIO is how a PTY says the same). */
static void pump_read(struct proc *p, int *fd, const char *stream)
{
    unsigned char buf[CHUNK_SIZE];
    ssize_t n = read(*fd, buf, sizeof(buf));

    if (n > 0) {
        broadcast_data(p, stream, buf, (size_t)n);
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (fd == &p->master_fd) {
        /* The PTY master doubles as the input side: close it under io_mu. */
        pthread_mutex_lock(&p->io_mu);
        close_fd(fd);
        pthread_mutex_unlock(&p->io_mu);
    } else {
        close_fd(fd);
    }
}

/* Polls the output descriptors (and the exit notification when notify is set). */
static int pump_poll(struct proc *p, int with_notify, int timeout_ms)
{
    struct pollfd pfd[3];
    int *fds[2];
    const char *names[2];
    int n = 0, rc;

    if (p->is_pty) {
        fds[n] = &p->master_fd, names[n++] = "pty";
    } else {
        fds[n] = &p->out_fd, names[n++] = "stdout";
        fds[n] = &p->err_fd, names[n++] = "stderr";
    }
    for (int i = 0; i < n; i++)
        pfd[i] = (struct pollfd){.fd = *fds[i], .events = POLLIN};
    pfd[n] = (struct pollfd){.fd = with_notify ? p->notify[0] : -1, .events = POLLIN};
    rc = poll(pfd, (nfds_t)n + 1, timeout_ms);
    if (rc <= 0)
        return rc < 0 && errno == EINTR ? 1 : rc;
    for (int i = 0; i < n; i++)
        if (pfd[i].revents != 0 && *fds[i] >= 0)
            pump_read(p, fds[i], names[i]);
    return pfd[n].revents != 0 ? 2 : 1;
}

static int outputs_open(struct proc *p)
{
    return p->is_pty ? p->master_fd >= 0 : p->out_fd >= 0 || p->err_fd >= 0;
}

/* How a process ended, in the end event's words ("exit status 0",
 * "signal: killed"); 1 when it exited 0. */
static int status_text(int status, char *text, size_t len)
{
    if (WIFEXITED(status)) {
        snprintf(text, len, "exit status %d", WEXITSTATUS(status));
        return WEXITSTATUS(status) == 0;
    }
    const char *name = strsignal(WTERMSIG(status));
    snprintf(text, len, "signal: %c%s%s", name ? (name[0] | 0x20) : '?', name ? name + 1 : "",
             WCOREDUMP(status) ? " (core dumped)" : "");
    return 0;
}

static json_t *end_event(int status, const char *text)
{
    json_t *end = json_object();

    if (WIFEXITED(status)) {
        int code = WEXITSTATUS(status);
        if (code != 0) {
            json_object_set_new(end, "exitCode", json_integer(code));
            json_object_set_new(end, "error", json_string(text));
        }
        json_object_set_new(end, "exited", json_true());
    } else {
        json_object_set_new(end, "exitCode", json_integer(-1));
        json_object_set_new(end, "error", json_string(text));
    }
    json_object_set_new(end, "status", json_string(text));
    return json_pack("{s:o}", "end", end);
}

static void unregister(struct proc *p)
{
    pthread_mutex_lock(&reg_mu);
    for (struct proc **pp = &registry; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    pthread_mutex_unlock(&reg_mu);
}

static void *pump_main(void *arg)
{
    struct proc *p = arg;
    int killed = 0, status, ok;
    char text[128];

    for (;;) {
        long long now = envd_now_ms();
        int timeout = -1;
        if (p->deadline_ms > 0 && !killed)
            timeout = p->deadline_ms > now ? (int)(p->deadline_ms - now) : 0;
        int rc = pump_poll(p, 1, timeout);
        if (rc == 2)
            break;
        if (rc == 0 && p->deadline_ms > 0 && !killed && envd_now_ms() >= p->deadline_ms) {
            /* Connect-Timeout-Ms of Start bounds the process's life, as in E2B's envd. */
            proc_signal(p, SIGKILL);
            killed = 1;
        }
    }
    /* Exited: collect what is still buffered, without waiting on grandchildren. */
    for (long long stop = envd_now_ms() + DRAIN_MAX_MS; outputs_open(p) && envd_now_ms() < stop;)
        if (pump_poll(p, 0, 50) == 0)
            break;
    pthread_mutex_lock(&reg_mu);
    status = p->status;
    pthread_mutex_unlock(&reg_mu);
    unregister(p);
    pthread_mutex_lock(&p->io_mu);
    close_fd(&p->stdin_fd);
    close_fd(&p->master_fd);
    pthread_mutex_unlock(&p->io_mu);
    ok = status_text(status, text, sizeof(text));
    lifecycle_process_ended(p->pid, p->config, ok, text);
    broadcast(p, end_event(status, text), 1);
    proc_unref(p);
    return NULL;
}

void proc_on_exit(pid_t pid, int status)
{
    char one = 1;

    pthread_mutex_lock(&reg_mu);
    for (struct proc *p = registry; p != NULL; p = p->next) {
        if (p->pid == pid && !p->exited) {
            p->exited = 1;
            p->status = status;
            if (write(p->notify[1], &one, 1) < 0)
                envd_log("pid %d: cannot notify pump: %s", pid, strerror(errno));
            break;
        }
    }
    pthread_mutex_unlock(&reg_mu);
}

struct proc_sub *proc_sub_new(void)
{
    struct proc_sub *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return NULL;
    s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->efd < 0) {
        free(s);
        return NULL;
    }
    return s;
}

int proc_subscribe(struct proc *p, struct proc_sub *s)
{
    int rc = -1;

    pthread_mutex_lock(&p->mu);
    if (!p->ended) {
        s->next = p->subs;
        p->subs = s;
        rc = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void proc_sub_free(struct proc_sub *s)
{
    while (s->head != NULL) {
        struct proc_item *it = s->head;
        s->head = it->next;
        proc_frame_unref(it->frame);
        free(it);
    }
    close(s->efd);
    free(s);
}

void proc_unsubscribe(struct proc *p, struct proc_sub *s)
{
    pthread_mutex_lock(&p->mu);
    for (struct proc_sub **pp = &p->subs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
    proc_sub_free(s);
}

struct proc_frame *proc_sub_pop(struct proc *p, struct proc_sub *s)
{
    struct proc_frame *f = NULL;
    uint64_t v;

    pthread_mutex_lock(&p->mu);
    if (s->head != NULL) {
        struct proc_item *it = s->head;
        s->head = it->next;
        if (s->head == NULL)
            s->tail = NULL;
        f = it->frame;
        s->queued -= f->len;
        free(it);
        pthread_cond_broadcast(&p->cond);
    }
    if (s->head == NULL && read(s->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
        envd_log("eventfd read: %s", strerror(errno));
    pthread_mutex_unlock(&p->mu);
    return f;
}

struct proc *proc_find(unsigned long pid, const char *tag)
{
    struct proc *found = NULL;

    pthread_mutex_lock(&reg_mu);
    for (struct proc *p = registry; p != NULL; p = p->next) {
        if ((pid != 0 && (unsigned long)p->pid == pid) ||
            (pid == 0 && tag != NULL && p->tag != NULL && strcmp(p->tag, tag) == 0)) {
            found = p;
            __atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
            break;
        }
    }
    pthread_mutex_unlock(&reg_mu);
    return found;
}

json_t *proc_list(void)
{
    json_t *list = json_array();

    pthread_mutex_lock(&reg_mu);
    for (struct proc *p = registry; p != NULL; p = p->next) {
        json_t *info = json_pack("{s:O,s:I}", "config", p->config, "pid", (json_int_t)p->pid);
        if (p->tag != NULL)
            json_object_set_new(info, "tag", json_str_lossy(p->tag));
        json_array_append_new(list, info);
    }
    pthread_mutex_unlock(&reg_mu);
    return json_pack("{s:o}", "processes", list);
}

int proc_signal(struct proc *p, int sig)
{
    /* Each process leads its own process group (setsid), so the signal reaches
     * the command's children too, as a terminal's kill would. */
    if (kill(-p->pid, sig) == 0)
        return 0;
    return kill(p->pid, sig);
}

void proc_kill_all(void)
{
    pthread_mutex_lock(&reg_mu);
    for (struct proc *p = registry; p != NULL; p = p->next)
        proc_signal(p, SIGKILL);
    pthread_mutex_unlock(&reg_mu);
}

/* Writes all of data to a descriptor that may be non-blocking (the PTY master). */
static int write_fully(int fd, const unsigned char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            if (poll(&pfd, 1, 30000) <= 0)
                return -1;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int proc_write_input(struct proc *p, int to_pty, const void *data, size_t len, const char **code,
                     char *msg, size_t msgsz)
{
    int rc = -1;

    if (to_pty != p->is_pty) {
        *code = "failed_precondition";
        snprintf(msg, msgsz,
                 to_pty ? "process %d has no pty; send stdin instead"
                        : "process %d has a pty; send pty input instead",
                 p->pid);
        return -1;
    }
    pthread_mutex_lock(&p->io_mu);
    int fd = p->is_pty ? p->master_fd : p->stdin_fd;
    if (fd < 0) {
        *code = "failed_precondition";
        snprintf(msg, msgsz, "stdin of process %d is not enabled or already closed", p->pid);
    } else if (write_fully(fd, data, len) < 0) {
        *code = "internal";
        snprintf(msg, msgsz, "error writing input of process %d: %s", p->pid, strerror(errno));
    } else {
        rc = 0;
    }
    pthread_mutex_unlock(&p->io_mu);
    return rc;
}

int proc_close_stdin(struct proc *p, const char **code, char *msg, size_t msgsz)
{
    if (p->is_pty) {
        *code = "failed_precondition";
        snprintf(msg, msgsz, "cannot close stdin of a PTY process; send Ctrl+D (0x04) instead");
        return -1;
    }
    pthread_mutex_lock(&p->io_mu);
    close_fd(&p->stdin_fd);
    pthread_mutex_unlock(&p->io_mu);
    return 0;
}

int proc_resize(struct proc *p, unsigned short cols, unsigned short rows, const char **code,
                char *msg, size_t msgsz)
{
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    int rc = 0;

    pthread_mutex_lock(&p->io_mu);
    if (!p->is_pty || p->master_fd < 0) {
        *code = "failed_precondition";
        snprintf(msg, msgsz, "process %d has no pty", p->pid);
        rc = -1;
    } else if (ioctl(p->master_fd, TIOCSWINSZ, &ws) < 0) {
        *code = "internal";
        snprintf(msg, msgsz, "cannot resize the pty: %s", strerror(errno));
        rc = -1;
    }
    pthread_mutex_unlock(&p->io_mu);
    return rc;
}

/* ---- spawning ---- */

struct child_fds {
    int in, out, err; /* child ends */
    int pty_slave;
    int status_w; /* exec status pipe, write end (close-on-exec) */
};

/* In the child after fork: only async-signal-safe calls, raw syscalls for identity. */
/* In a container, a command runs as the user the SDK named. In agent mode it
 * runs as the person running envd, who may not switch identity at all. */
static int switch_identity(const struct envd_user *u)
{
    if (syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) < 0 ||
        syscall(SYS_setresgid, u->gid, u->gid, u->gid) < 0 ||
        syscall(SYS_setresuid, u->uid, u->uid, u->uid) < 0)
        return -1;
    return 0;
}

static void child_exec(const struct proc_spec *spec, const struct child_fds *cf, const char *exe)
{
    sigset_t all;
    int err;

    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    signal(SIGPIPE, SIG_DFL);
    setsid();
    if (cf->pty_slave >= 0) {
        ioctl(cf->pty_slave, TIOCSCTTY, 0);
        dup2(cf->pty_slave, 0);
        dup2(cf->pty_slave, 1);
        dup2(cf->pty_slave, 2);
    } else {
        dup2(cf->in, 0);
        dup2(cf->out, 1);
        dup2(cf->err, 2);
    }
    if ((!envd_cfg.agent && switch_identity(spec->user) < 0) || chdir(spec->cwd) < 0) {
        err = errno;
    } else {
        execve(exe, spec->argv, spec->envp);
        err = errno;
    }
    if (write(cf->status_w, &err, sizeof(err)) < 0)
        _exit(126);
    _exit(127);
}

void proc_find_executable(const char *cmd, char *const *envp, char *out, size_t outsz)
{
    const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    snprintf(out, outsz, "%s", cmd);
    if (strchr(cmd, '/') != NULL)
        return;
    for (char *const *e = envp; *e != NULL; e++)
        if (strncmp(*e, "PATH=", 5) == 0)
            path = *e + 5;
    for (const char *p = path; p != NULL;) {
        const char *colon = strchr(p, ':');
        int len = colon ? (int)(colon - p) : (int)strlen(p);
        if (snprintf(out, outsz, "%.*s/%s", len, len ? p : ".", cmd) < (int)outsz &&
            access(out, X_OK) == 0)
            return;
        p = colon ? colon + 1 : NULL;
    }
    snprintf(out, outsz, "%s", cmd);
}

static int open_pty(const struct proc_spec *spec, int *master, int *slave)
{
    char name[128];
    struct winsize ws = {.ws_row = spec->rows ? spec->rows : 24,
                         .ws_col = spec->cols ? spec->cols : 80};

    *master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (*master < 0)
        return -1;
    if (grantpt(*master) < 0 || unlockpt(*master) < 0 ||
        ptsname_r(*master, name, sizeof(name)) != 0 ||
        (*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
        close_fd(master);
        return -1;
    }
    ioctl(*master, TIOCSWINSZ, &ws);
    return 0;
}

static struct proc *proc_new(const struct proc_spec *spec)
{
    struct proc *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->refs = 2; /* the pump's and the caller's */
    p->master_fd = p->stdin_fd = p->out_fd = p->err_fd = -1;
    p->notify[0] = p->notify[1] = -1;
    p->is_pty = spec->pty;
    p->deadline_ms = spec->deadline_ms;
    p->config = json_incref(spec->config);
    p->tag = spec->tag ? strdup(spec->tag) : NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->io_mu, NULL);
    pthread_cond_init(&p->cond, NULL);
    return p;
}

/* Creates the descriptors both sides need; child ends go to cf. */
static int make_fds(struct proc *p, const struct proc_spec *spec, struct child_fds *cf)
{
    int in[2] = {-1, -1}, out[2], err[2];

    cf->in = cf->out = cf->err = cf->pty_slave = -1;
    if (pipe2(p->notify, O_CLOEXEC) < 0)
        return -1;
    if (spec->pty)
        return open_pty(spec, &p->master_fd, &cf->pty_slave) < 0
                   ? -1
                   : fcntl(p->master_fd, F_SETFL, O_NONBLOCK);
    if (pipe2(out, O_CLOEXEC) < 0)
        return -1;
    p->out_fd = out[0], cf->out = out[1];
    if (pipe2(err, O_CLOEXEC) < 0)
        return -1;
    p->err_fd = err[0], cf->err = err[1];
    fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
    fcntl(p->err_fd, F_SETFL, O_NONBLOCK);
    if (spec->stdin_enabled) {
        if (pipe2(in, O_CLOEXEC) < 0)
            return -1;
        p->stdin_fd = in[1], cf->in = in[0];
    } else {
        cf->in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    return cf->in < 0 ? -1 : 0;
}

static void close_child_fds(struct child_fds *cf)
{
    close_fd(&cf->in);
    close_fd(&cf->out);
    close_fd(&cf->err);
    close_fd(&cf->pty_slave);
}

/* Forks with the registry locked, so the reaper cannot miss this pid's exit. */
static int fork_registered(struct proc *p, const struct proc_spec *spec, struct child_fds *cf,
                           const char *exe)
{
    pthread_mutex_lock(&reg_mu);
    p->pid = fork();
    if (p->pid == 0)
        child_exec(spec, cf, exe);
    if (p->pid > 0) {
        p->next = registry;
        registry = p;
    }
    pthread_mutex_unlock(&reg_mu);
    return p->pid > 0 ? 0 : -1;
}

static int start_pump(struct proc *p)
{
    pthread_attr_t attr;
    pthread_t t;
    int rc;

    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    rc = pthread_create(&t, &attr, pump_main, p);
    pthread_attr_destroy(&attr);
    return rc;
}

struct proc *proc_spawn(const struct proc_spec *spec, struct proc_sub *first, char *msg,
                        size_t msgsz)
{
    struct proc *p = proc_new(spec);
    struct child_fds cf = {-1, -1, -1, -1, -1};
    int status_pipe[2], child_err = 0;
    char exe[PATH_MAX];

    if (p == NULL || pipe2(status_pipe, O_CLOEXEC) < 0) {
        snprintf(msg, msgsz, "cannot start process: %s", strerror(errno));
        if (p)
            proc_free(p);
        return NULL;
    }
    cf.status_w = status_pipe[1];
    proc_find_executable(spec->argv[0], spec->envp, exe, sizeof(exe));
    if (make_fds(p, spec, &cf) < 0 || fork_registered(p, spec, &cf, exe) < 0) {
        snprintf(msg, msgsz, "cannot start process: %s", strerror(errno));
        close_child_fds(&cf);
        close(status_pipe[0]);
        close(status_pipe[1]);
        proc_free(p);
        return NULL;
    }
    close_child_fds(&cf);
    close(status_pipe[1]);
    /* EOF: exec succeeded (the pipe is close-on-exec); an int: why it failed. */
    ssize_t n;
    do {
        n = read(status_pipe[0], &child_err, sizeof(child_err));
    } while (n < 0 && errno == EINTR);
    close(status_pipe[0]);
    if (n > 0) {
        snprintf(msg, msgsz, "error starting process '%s': %s", spec->argv[0], strerror(child_err));
        unregister(p);
        proc_free(p);
        return NULL;
    }
    if (first != NULL)
        proc_subscribe(p, first);
    if (start_pump(p) != 0) {
        /* Without a pump nobody would report this process: stop it. */
        proc_signal(p, SIGKILL);
        unregister(p);
        snprintf(msg, msgsz, "cannot start the output thread");
        proc_free(p);
        return NULL;
    }
    return p;
}
